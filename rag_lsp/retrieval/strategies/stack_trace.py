"""Stack frames → the lines they name, innermost first.

A trace is the most reliable evidence a message can carry: it names the
exact files and lines that ran. But it was printed on another machine, so
its paths are mapped onto the checkout by the longest matching path suffix
(``/srv/app/inventory/stock.py`` → ``inventory/stock.py``), and a JVM frame's
bare file name (``Stock.java``) is narrowed by its package. The innermost
frame that maps into the workspace weighs most; outer frames weigh less,
because the fault is usually where the trace ends in our code.
"""

from __future__ import annotations

import re

from rag_lsp.retrieval.evidence import Frame
from rag_lsp.retrieval.strategies.base import RELIABILITY, Finding, PathMatch, Skipped, StrategyContext, file_stem

NAME = "stack_trace"
# Each step outwards from the innermost mapped frame keeps this share of the weight, down to the floor.
DEPTH_DECAY = 0.85
DEPTH_FLOOR = 0.4


def run(ctx: StrategyContext) -> list[Finding]:
    frames = ctx.frames
    if not frames:
        raise Skipped("no stack frames in the message")
    mapped = []
    for frame in sorted(frames, key=lambda f: f.depth):
        match = _resolve(ctx, frame)
        # A library frame only counts when its file is clearly ours (the workspace is that library).
        if match.paths and (match.complete or not frame.library):
            mapped.append((frame, match))
    findings = []
    for rank, (frame, match) in enumerate(mapped):
        weight = RELIABILITY["stack_frame"] * max(DEPTH_DECAY**rank, DEPTH_FLOOR) * match.specificity
        where = f"{frame.path or frame.module}:{frame.line}" if frame.line else f"{frame.path or frame.module}"
        for path in match.paths:
            findings.append(Finding(
                path=path, strategy=NAME, anchor=frame.path or frame.module, weight=weight,
                reason=f"stack frame {where}" + (f" in {frame.function}" if frame.function else ""),
                line=frame.line, chunk_id=ctx.chunk_at(path, frame.line, frame.function),
            ))
    return findings


def _resolve(ctx: StrategyContext, frame: Frame) -> PathMatch:
    """The files a frame means: its path by suffix, narrowed by its package when the name alone is ambiguous."""
    if frame.path:
        match = ctx.resolve_path(frame.path)
        if len(match.paths) > 1 and frame.module:
            # Class names (capitalised by convention) are dropped; the package remains.
            package = [part for part in re.split(r"[./\\$]", frame.module) if part and not part[0].isupper()]
            narrowed = tuple(p for p in match.paths if _in_package(p, package))
            if narrowed:
                return PathMatch(narrowed, True)
        return match
    if frame.module:
        files = tuple(ctx.index.symbols.modules.resolve(frame.module))
        return PathMatch(files, bool(files))
    return PathMatch((), False)


def _in_package(path: str, package: list[str]) -> bool:
    """Whether the file's module path contains the package's segments in order (``com/acme/orders``)."""
    parts = [*path.split("/")[:-1], file_stem(path)]
    width = len(package)
    return bool(width) and any(parts[i:i + width] == package for i in range(len(parts) - width + 1))
