"""Files and directories the message names → those files.

"The problem is in ``jsonrep.py`` at line 227", a GitHub link to
``src/cart/total.py#L40``, or "everything under ``inventory/``": a developer
who names a path knows where to look. A path is resolved by its longest
matching suffix; a bare file name shared by many files counts less, and a
directory spreads its weight over the files it holds.
"""

from __future__ import annotations

import re

from rag_lsp.retrieval.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext, specificity

NAME = "paths"
# A directory holding more files than this, or a file name shared by more, says too little to be followed.
MAX_DIRECTORY_FILES = 40
MAX_NAMESAKES = 40

# A path-like token, optionally followed by a line (``:12``, ``#L12``, ``, line 12``, ``at line 12``).
_PATH = re.compile(
    r"(?P<path>(?:[A-Za-z]:)?[\w.\-~/\\@+]*[\w\-]+/?)"
    r"(?:[`'\"]?(?::|#L|,? line |,? at line )(?P<line>\d+))?"
)


def run(ctx: StrategyContext) -> list[Finding]:
    # Paths inside stack frames and tool locations are read, with their depth and severity, by those strategies.
    owned = ctx.evidence_paths()
    written_paths = _mentions(ctx.query.text)
    matches = {written: ctx.resolve_path(written) for written in written_paths}
    # A path written with folders the workspace lacks (``src/project/__init__.py``, in prose or in a tool's
    # output) names the reporter's own file; the same name written bare elsewhere in the message means that
    # file too, not every namesake here.
    foreign = {_name(written) for written, match in matches.items() if "/" in _slashed(written) and not match.complete}
    mentions = {written: line for written, line in written_paths.items() if _slashed(written) not in owned
                and ("/" in _slashed(written) or _name(written) not in foreign)}
    if not mentions:
        raise Skipped("no file or directory paths in the message")
    findings = []
    for written, line in mentions.items():
        in_prose = written in ctx.message.prose
        match = matches[written]
        anchor = _slashed(written)
        if len(match.paths) > MAX_NAMESAKES:
            continue
        if match.paths:
            weight = RELIABILITY["named_path"] * match.specificity
            where = f"{written}:{line}" if line else written
            for path in match.paths:
                findings.append(Finding(path=path, strategy=NAME, anchor=anchor, weight=weight,
                                        reason=f"names the path {where}", line=line,
                                        chunk_id=ctx.chunk_at(path, line), in_prose=in_prose))
        elif "/" in anchor.rstrip("/"):
            findings.extend(_directory(ctx, anchor, in_prose))
    return findings


def _slashed(written: str) -> str:
    return written.replace("\\", "/")


def _name(written: str) -> str:
    return _slashed(written).rstrip("/").rsplit("/", 1)[-1]


def _mentions(text: str) -> dict[str, int | None]:
    """Path-like tokens (with a separator or an extension), each with the first line number given for it."""
    found: dict[str, int | None] = {}
    for match in _PATH.finditer(text):
        written = match.group("path").rstrip(".")
        if not ("/" in written or "\\" in written or re.search(r"\.[A-Za-z]\w{0,9}$", written)):
            continue
        line = int(match.group("line")) if match.group("line") else None
        if found.get(written) is None:
            found[written] = line
    return found


def _directory(ctx: StrategyContext, written: str, in_prose: bool) -> list[Finding]:
    """A named directory: its files share the weight, if there are few enough of them to mean something."""
    findings = []
    for directory in ctx.resolve_directory(written.rstrip("/\\")):
        files = ctx.files_under(directory)
        if not files or len(files) > MAX_DIRECTORY_FILES:
            continue
        weight = RELIABILITY["named_path"] * specificity(len(files))
        findings.extend(Finding(path=path, strategy=NAME, anchor=written, weight=weight,
                                reason=f"in the directory {written}", in_prose=in_prose) for path in files)
    return findings
