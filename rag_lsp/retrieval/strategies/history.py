"""A commit id in the message → the files that commit changed.

"This broke in ``3f2a9c1``" points at a change, and the change's files are
where to look. Only git knows them, so this is the one strategy that leaves
the index: it runs ``git show`` in the workspace with a timeout, and reports
why it did not run when the workspace is not a git checkout or git is
missing. Ids come from untrusted text, so git is called injection-safe: an
argument vector (no shell), each id checked once more to be 7-40 hex digits
right before the call, ``--end-of-options`` before it so that nothing can be
read as an option, ``--no-ext-diff --no-textconv`` so that the repository's
configuration runs no program, and git run as ``rag_lsp/git.py`` runs it
(no shell, no filesystem monitor, no ``GIT_*`` variables).

One short id in sixty-odd is all digits, and a message is full of numbers
that are not ids (line numbers, versions, dates). So hex with a letter and a
digit is taken as an id outright, while a run of digits is only tried after
those, and only where git can say whether it names a commit: outside a
checkout it is just a number. Runs of letters a-f are words ("defaced").
"""

from __future__ import annotations

import re
import subprocess

from rag_lsp.git import is_checkout, run_git
from rag_lsp.retrieval.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext, specificity

NAME = "history"
MAX_COMMITS = 3
# The longest a single git call may take, within the ranking's remaining time.
GIT_TIMEOUT_S = 2.0
_COMMIT = re.compile(r"(?<![\w./-])([0-9a-f]{7,40})(?![\w/-])")
_ID = re.compile(r"[0-9a-f]{7,40}")


def run(ctx: StrategyContext) -> list[Finding]:
    ids, numbers = _candidates(ctx.query.text)
    in_checkout = is_checkout(ctx.index.root)
    if not ids and not (numbers and in_checkout):
        raise Skipped("no commit id in the message")
    if not in_checkout:
        raise Skipped("the workspace is not a git checkout")
    commits = (ids + numbers)[:MAX_COMMITS]
    findings = []
    for commit in commits:
        timeout = min(GIT_TIMEOUT_S, ctx.deadline - ctx.clock())
        if timeout <= 0:
            ctx.truncated = True
            break
        changed = [p for p in _changed_files(ctx, commit, timeout) if p in ctx.index.files]
        weight = RELIABILITY["history"] * specificity(len(changed))
        findings.extend(Finding(path=path, strategy=NAME, anchor=commit, weight=weight, in_prose=True,
                                reason=f"changed in commit {commit}") for path in changed)
    return findings


def _candidates(text: str) -> tuple[list[str], list[str]]:
    """Hex ids with a letter and a digit, and runs of digits that may be ids, each in message order."""
    found = list(dict.fromkeys(_COMMIT.findall(text)))
    ids = [c for c in found if re.search(r"[a-f]", c) and re.search(r"\d", c)]
    numbers = [c for c in found if c.isdigit()]
    return ids, numbers


def _changed_files(ctx: StrategyContext, commit: str, timeout: float) -> list[str]:
    """Paths (relative to the root) that ``commit`` changed; [] when git knows no commit by that id.

    ``^{commit}`` makes git refuse an id that names a blob or a tree, whose
    text ``git show`` would otherwise print as if it were a list of paths.
    """
    if not _ID.fullmatch(commit):
        raise ValueError(f"not a commit id: {commit!r}")
    arguments = ["show", "--relative", "--name-only", "--no-renames", "--no-ext-diff", "--no-textconv", "--format=",
                 "--end-of-options", f"{commit}^{{commit}}", "--"]
    try:
        done = run_git(ctx.index.root, arguments, timeout)
    except FileNotFoundError as exc:
        raise Skipped("git is not installed") from exc
    except subprocess.TimeoutExpired:
        ctx.truncated = True
        return []
    if done.returncode != 0:
        return []
    return sorted({line.strip() for line in done.stdout.splitlines() if line.strip()})
