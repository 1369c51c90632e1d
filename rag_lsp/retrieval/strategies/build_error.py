"""Compiler, type-checker, linter and test-runner locations → the lines they report.

``file:line:col: message`` and its cousins (mypy, pyright, tsc, eslint, go
vet, rustc/cargo, javac, gcc/clang, pytest, jest) name a place as precisely as
a stack frame, and are almost as reliable: an error is where the tool looked,
and the fix is usually there. Warnings and notes point less firmly than
errors. Paths are relative to wherever the tool ran, so they too are mapped
by path suffix.
"""

from __future__ import annotations

from rag_lsp.retrieval.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext

NAME = "build_error"
SEVERITY_FACTOR = {"error": 1.0, "warning": 0.8, "note": 0.6, "info": 0.6}
# A tool that printed no severity most often reports an error or a warning.
UNKNOWN_SEVERITY_FACTOR = 0.8


def run(ctx: StrategyContext) -> list[Finding]:
    locations = ctx.locations
    if not locations:
        raise Skipped("no compiler or linter locations in the message")
    findings = []
    for location in locations:
        match = ctx.resolve_path(location.path)
        factor = SEVERITY_FACTOR.get((location.severity or "").lower(), UNKNOWN_SEVERITY_FACTOR)
        weight = RELIABILITY["compiler_location"] * factor * match.specificity
        summary = " ".join((location.message or "").split())[:80]
        where = f"{location.path}:{location.line}" if location.line else location.path
        reason = f"{location.tool or 'tool'} {location.severity or 'message'} {where}"
        if summary:
            reason += f": {summary}"
        for path in match.paths:
            findings.append(Finding(path=path, strategy=NAME, anchor=location.path, weight=weight, reason=reason,
                                    line=location.line, chunk_id=ctx.chunk_at(path, location.line)))
    return findings
