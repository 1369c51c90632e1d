"""An environment variable → where it is read, set and documented.

``SHOP_RATE_LIMIT`` in a message is a question about configuration, whose
answer is spread over three kinds of place: the code that reads the
variable, the files that set it (``.env.example``, a Dockerfile, a compose
file, CI configuration) and the documentation that explains it. An
all-capitals name that no code reads from the environment, and that the
message does not call a variable, is a constant, and is left to the symbol
strategy.
"""

from __future__ import annotations

import re

from rag_lsp.languages import language_for_path
from rag_lsp.path_kinds import is_prose_path
from rag_lsp.retrieval.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext, specificity

NAME = "docs_config"
MAX_VARIABLES = 8
# The code that reads a variable answers most questions about it; settings and documentation follow.
ROLE_FACTOR = {"reads": 1.0, "sets": 0.9, "documents": 0.8}
_VARIABLE = re.compile(r"(?<![\w$])\$?\{?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\}?(?!\w)")
# A line that reads the environment, in the common languages and tools.
_READS = re.compile(r"environ|getenv|process\.env|import\.meta\.env|env::var|ENV\[|ENV\.fetch|Environment\."
                    r"|System\.getenv|os\.Getenv|\benv\(|config\(|Deno\.env")
_SETTING_LANGUAGES = frozenset({"yaml", "toml", "ini", "shell", "json", "build"})
_SETTING_NAMES = re.compile(r"(^|/)(Dockerfile|Containerfile|Makefile|Procfile|\.env[\w.-]*|[\w.-]*\.env)$")


def run(ctx: StrategyContext) -> list[Finding]:
    variables = list(dict.fromkeys(_VARIABLE.findall(ctx.query.text)))[:MAX_VARIABLES]
    if not variables:
        raise Skipped("no environment variable in the message")
    places: dict[str, list[tuple[int, str, str]]] = {name: [] for name in variables}
    for name in variables:
        for chunk_id, chunk in ctx.chunks_containing(name):
            role = _role(chunk.path, chunk.content, name)
            if role:
                places[name].append((chunk_id, chunk.path, role))
    findings = []
    for name, found in places.items():
        # Without a read from the environment, only the message itself can say the name is a variable.
        if not any(role == "reads" for _, _, role in found) and not _called_variable(ctx.query.text, name):
            continue
        found = ctx.capped(found)
        files = {path for _, path, _ in found}
        weight = RELIABILITY["config_key"] * specificity(len(files))
        findings.extend(Finding(path=path, strategy=NAME, anchor=name, weight=weight * ROLE_FACTOR[role],
                                chunk_id=chunk_id,
                                reason=f"{role} the environment variable {name}", in_prose=True)
                        for chunk_id, path, role in found)
    return findings


def _called_variable(text: str, name: str) -> bool:
    """Whether the message writes the name as a variable (``$NAME``) or calls it one."""
    return (f"${name}" in text or f"${{{name}}}" in text
            or re.search(r"\b(environment|env)\b", text, re.IGNORECASE) is not None)


def _role(path: str, content: str, name: str) -> str | None:
    """``reads``, ``sets`` or ``documents`` for a chunk mentioning the variable, or None for a constant."""
    if is_prose_path(path):
        return "documents"
    if _SETTING_NAMES.search(path) or language_for_path(path) in _SETTING_LANGUAGES:
        return "sets"
    for line in content.splitlines():
        if name in line and _READS.search(line):
            return "reads"
    return None
