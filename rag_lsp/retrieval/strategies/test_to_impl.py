"""A failing or named test → the test itself, the code it tests by naming convention, and what its body calls.

A test id (``tests/test_cart.py::test_total``, ``TestCart/total``,
``com.acme.CartTest.total``, ``Cart › adds items``) rarely points at the bug
itself: the fault is in the implementation the test exercises. Projects name
that implementation after the test (``test_cart.py`` → ``cart.py``,
``cart_test.go`` → ``cart.go``, ``CartTest.java`` → ``Cart.java`` in the
mirrored ``src/main`` tree), and the test body calls into it, so both lead
from the test to the code under test.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from rag_lsp.index.module_map import common_suffix
from rag_lsp.model import Definition
from rag_lsp.path_kinds import TEST_DIRS, is_test_path
from rag_lsp.retrieval.evidence import TestId
from rag_lsp.retrieval.strategies.base import (
    RELIABILITY,
    Finding,
    Skipped,
    StrategyContext,
    specificity,
)

NAME = "test_to_impl"
# A test that is only named, not reported failing, says a little less.
NAMED_ONLY_FACTOR = 0.8
# Names a test body calls that are defined in more files than this are too common to follow.
MAX_CALLEE_FILES = 5

# Test file names and the implementation stem each convention implies.
_CONVENTIONS = (
    re.compile(r"^test_(?P<stem>.+)\.py$"),
    re.compile(r"^(?P<stem>.+)_test\.(py|go|rs|exs)$"),
    re.compile(r"^(?P<stem>.+)\.(test|spec)\.[cm]?[jt]sx?$"),
    re.compile(r"^(?P<stem>.+?)(Tests?|Spec|IT)\.(java|kt|scala|cs|php|swift)$"),
    re.compile(r"^Test(?P<stem>[A-Z].*)\.(java|kt|scala|cs|php|swift)$"),
    re.compile(r"^(?P<stem>.+)_spec\.rb$"),
)
# Extensions an implementation may have, by the test file's extension.
_FAMILIES = (
    (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"),
    (".exs", ".ex"),
    (".c", ".cc", ".cpp", ".h", ".hpp"),
)
# Directories that a test tree adds to the mirrored source path.
_TEST_DIR_NAMES = TEST_DIRS | {"unit", "integration"}


def run(ctx: StrategyContext) -> list[Finding]:
    test_ids = ctx.test_ids
    if not test_ids:
        raise Skipped("no test ids in the message")
    findings: list[Finding] = []
    for test_id in test_ids:
        label = _label(test_id)
        factor = 1.0 if test_id.failed else NAMED_ONLY_FACTOR
        for path in _test_files(ctx, test_id):
            findings.extend(_test_itself(ctx, test_id, path, label, factor))
            findings.extend(_by_convention(ctx, path, label, factor))
    return findings


def _label(test_id: TestId) -> str:
    return "::".join(filter(None, (test_id.path or test_id.module, *test_id.names)))


def _test_files(ctx: StrategyContext, test_id: TestId) -> list[str]:
    """The files a test id means: by path, else by module, else by where its names are defined in tests.

    A module (a Go package, a Python module) may hold several files; those
    that define the test's names, or else the test files among them, win.
    """
    if test_id.path and (match := ctx.resolve_path(test_id.path)).paths:
        return list(match.paths)
    files = ctx.index.symbols.modules.resolve(test_id.module) if test_id.module else []
    if not files:
        files = sorted({d.path for name in test_id.names for d in ctx.symbols.definitions(name)})
    defining = [p for p in files if any(d.name in test_id.names for d in ctx.symbols.definitions_in(p))]
    return defining or [p for p in files if is_test_path(p)]


def _test_itself(ctx: StrategyContext, test_id: TestId, path: str, label: str, factor: float) -> list[Finding]:
    """The test's definition, then the names its body calls that are defined outside tests."""
    defined = [d for d in ctx.symbols.definitions_in(path) if d.name in test_id.names]
    test = max(defined, key=lambda d: (test_id.names.index(d.name), -d.start_line), default=None)
    chunk_id = ctx.definition_chunk(test) if test else _chunk_naming(ctx, path, test_id.names)
    verb = "failing test" if test_id.failed else "test"
    findings = [Finding(path=path, strategy=NAME, anchor=label, weight=RELIABILITY["test"] * factor,
                        reason=f"{verb} {label}", line=test.start_line if test else None, chunk_id=chunk_id)]
    if test is not None:
        findings.extend(_callees(ctx, test, label, factor))
    return findings


def _chunk_naming(ctx: StrategyContext, path: str, names: tuple[str, ...]) -> int | None:
    """The chunk of a test file whose text names the test (Jest and RSpec tests are strings, not definitions)."""
    for name in reversed(names):
        for chunk_id, chunk in ctx.index.chunks_of(path):
            if name in chunk.content:
                return chunk_id
    return None


def _callees(ctx: StrategyContext, test: Definition, label: str, factor: float) -> list[Finding]:
    findings = []
    called = sorted({r.name for r in ctx.index.references.get(test.path, ())
                     if test.start_line <= r.line <= test.end_line and r.name != test.name})
    for name in ctx.capped(called):
        definitions = [d for d in ctx.symbols.definitions(name) if not is_test_path(d.path)]
        files = {d.path for d in definitions}
        if not files or len(files) > MAX_CALLEE_FILES:
            continue
        weight = RELIABILITY["reference"] * factor * specificity(len(files))
        for definition in definitions:
            findings.append(Finding(
                path=definition.path, strategy=NAME, anchor=name, weight=weight,
                reason=f"test {label} calls `{definition.qualname}`", line=definition.start_line,
                chunk_id=ctx.definition_chunk(definition)))
    return findings


def _by_convention(ctx: StrategyContext, test_path: str, label: str, factor: float) -> list[Finding]:
    """The implementation named after the test file, preferring the mirror of the test's directory."""
    pure = PurePosixPath(test_path)
    stem = next((m.group("stem") for c in _CONVENTIONS if (m := c.match(pure.name))), None)
    if stem is None:
        return []
    candidates = [p for ext in _extensions(pure.suffix) for p in ctx.tables.files_named(stem + ext)
                  if not is_test_path(p)]
    if not candidates:
        return []
    test_dirs = [part for part in pure.parent.parts if part not in _TEST_DIR_NAMES]
    scored = [(common_suffix(test_dirs, list(PurePosixPath(p).parent.parts)), p) for p in candidates]
    best = max(score for score, _ in scored)
    chosen = sorted(p for score, p in scored if score == best)
    weight = RELIABILITY["naming_convention"] * factor * specificity(len(chosen))
    return [Finding(path=path, strategy=NAME, anchor=f"{label} (implementation)", weight=weight,
                    reason=f"implementation of {test_path} by naming convention") for path in chosen]


def _extensions(suffix: str) -> tuple[str, ...]:
    for family in _FAMILIES:
        if suffix in family:
            return family
    return (suffix,)

