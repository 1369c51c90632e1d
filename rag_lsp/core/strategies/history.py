"""A commit id in the message → the files that commit changed.

"This broke in ``3f2a9c1``" points at a change, and the change's files are
where to look. Only git knows them, so this is the one strategy that leaves
the index: it runs ``git show`` in the workspace with a timeout, and reports
why it did not run when the workspace is not a git checkout or git is
missing. Ids come from untrusted text, so they are checked to be plain hex
before they reach the command line.
"""

from __future__ import annotations

import re
import subprocess

from rag_lsp.core.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext, specificity

NAME = "history"
MAX_COMMITS = 3
# The longest a single git call may take, within the ranking's remaining time.
GIT_TIMEOUT_S = 2.0
_COMMIT = re.compile(r"(?<![\w./-])([0-9a-f]{7,40})(?![\w/-])")


def run(ctx: StrategyContext) -> list[Finding]:
    commits = [c for c in dict.fromkeys(_COMMIT.findall(ctx.query.text))
               if re.search(r"[a-f]", c) and re.search(r"\d", c)][:MAX_COMMITS]
    if not commits:
        raise Skipped("no commit id in the message")
    if not (ctx.index.root / ".git").exists():
        raise Skipped("the workspace is not a git checkout")
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


def _changed_files(ctx: StrategyContext, commit: str, timeout: float) -> list[str]:
    """Paths (relative to the root) that ``commit`` changed; [] when git does not know the commit."""
    command = ["git", "-c", "core.fsmonitor=false", "-C", str(ctx.index.root), "show", "--relative",
               "--name-only", "--no-renames", "--format=", commit, "--"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise Skipped("git is not installed") from exc
    except subprocess.TimeoutExpired:
        ctx.truncated = True
        return []
    if done.returncode != 0:
        return []
    return sorted({line.strip() for line in done.stdout.splitlines() if line.strip()})
