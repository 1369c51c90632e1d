"""Qualified names → the files their module part names.

``django.db.models.Q``, ``tokio::sync::broadcast``, ``com.acme.Orders`` and
``Foo\\Bar\\Baz`` all end in path segments of a file once layout directories
(``src/``, ``src/main/java/``) and module files (``__init__.py``, ``mod.rs``,
``index.ts``) are set aside; ``ModuleMap`` finds the files sharing the longest
run of them. The more segments match, the more the match says; a package
(a directory module) names all the files under it, so it says less.
"""

from __future__ import annotations

import re

from rag_lsp.index.module_map import common_suffix, module_key, segments, strip_layout
from rag_lsp.path_kinds import is_code_path, is_unknown_path
from rag_lsp.retrieval.strategies.base import (
    CODE_SAMPLE_FACTOR,
    RELIABILITY,
    Finding,
    Skipped,
    StrategyContext,
    file_stem,
    specificity,
)

NAME = "modules"
# Receivers that start attribute chains in code; they name no module.
_RECEIVERS = frozenset({"self", "this", "cls", "super", "Self"})
_PHP_NAME = re.compile(r"\b[A-Z]\w*(?:\\[A-Z]\w*)+")
# Segments of the name beyond the module that ModuleMap.resolve also tries (``pkg.mod.Class.method``).
_MEMBER_SEGMENTS = 2


def run(ctx: StrategyContext) -> list[Finding]:
    names = [n for n in ctx.query.names if re.search(r"\.|::", n)] + _PHP_NAME.findall(ctx.query.text)
    names = [n for n in dict.fromkeys(names) if segments(n)[0] not in _RECEIVERS]
    bare = _bare_modules(ctx)
    if not names and not bare:
        raise Skipped("no qualified names or backticked module names in the message")
    findings = []
    for name, files in bare.items():
        in_prose = ctx.message.in_prose(name)
        # A word in a good share of the code is the project's own vocabulary (its name: `jq` in jq), which says
        # little about one module; a rare one (`ku`) says much.
        weight = (RELIABILITY["module_path"] * ctx.rarity(name) * specificity(len(files))
                  * (1.0 if in_prose else CODE_SAMPLE_FACTOR))
        findings.extend(Finding(path=path, strategy=NAME, anchor=name, in_prose=in_prose, weight=weight,
                                reason=f"module `{name}`") for path in files)
    for name in names:
        # A module is code; documentation pages named like it (``iam.rst``) are not what the name means.
        files = [path for path in ctx.index.symbols.modules.resolve(name) if is_code_path(path)]
        if not files:
            continue
        in_prose = ctx.message.in_prose(name)
        parts = segments(name)
        for path in files:
            key = list(strip_layout(module_key(path)))
            matches = [common_suffix(parts[: len(parts) - drop], key)
                       for drop in range(min(len(parts), _MEMBER_SEGMENTS + 1))]
            dropped = next((drop for drop, matched in enumerate(matches) if matched), 0)
            if not _members_known(ctx, parts[len(parts) - dropped:]):
                continue
            matched = max(matches)
            weight = _reliability(matched) * _package_specificity(ctx, path) * specificity(len(files))
            findings.append(Finding(
                path=path, strategy=NAME, anchor=name, in_prose=in_prose,
                weight=weight * (1.0 if in_prose else CODE_SAMPLE_FACTOR),
                reason=f"module path `{name}`"))
    return findings


def _bare_modules(ctx: StrategyContext) -> dict[str, list[str]]:
    """Backticked single words that no definition has but source files are named for (the `ku` locale is
    ``locale/ku.js``; `out_forward` is ``plugin/out_forward.rb``), each with those files. A word a definition
    has is the symbols strategy's; a file named for it as well would only repeat that evidence."""
    found = {}
    for name in ctx.query.backticked:
        if ctx.index.symbols.count(name):
            continue
        files = [path for path in ctx.index.symbols.modules.resolve(name)
                 if is_code_path(path) and not is_unknown_path(path) and file_stem(path) == name]
        if files:
            found[name] = files
    return found


def _members_known(ctx: StrategyContext, members: list[str]) -> bool:
    """Whether the segments after the module part are members (``Class.method``, ``__version__``), not the
    rest of a product's name: ``lazy.nvim`` is lazy.nvim itself, not a member ``nvim`` of ``lazy.lua``. A plain
    lowercase word is a member only when the code defines or uses it."""
    return all(not (member.isalpha() and member.islower()) or ctx.index.symbols.count(member)
               or ctx.tables.use_files(member) for member in members)


def _reliability(matched: int) -> float:
    """0.7 for one matching segment, rising to 0.85 for four or more."""
    low, high = RELIABILITY["module_path"], RELIABILITY["module_path_max"]
    return low + (high - low) * min(max(matched - 1, 0), 3) / 3


def _package_specificity(ctx: StrategyContext, path: str) -> float:
    """A directory module (``pkg/__init__.py``, ``mod.rs``) stands for every file under its directory."""
    directory = path.rsplit("/", 1)[0] if "/" in path else ""
    if module_key(path)[-1:] == (file_stem(path),) or not directory:
        return 1.0
    return specificity(ctx.tables.files_under(directory))
