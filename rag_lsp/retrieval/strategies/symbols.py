"""Names the message uses → where they are defined, and (weakly) where they are used.

A developer who writes ``Ledger.post``, ``fetchTotal()`` or ``PersonName3``
means a definition. A member is looked up with its qualifier: the definition
inside ``Ledger``, or in the file named after the qualifier, comes first.
Plain words (``reindl``, ``Array``) may name a definition too but say less,
and only count when few files define them and the code rarely uses them.
Uses of a name weigh little and only count for names used in few files. Names seen only in pasted code (a
reproducer, a log) are incidental more often than prose names, so they
count less.
"""

from __future__ import annotations

import re

from rag_lsp.index.module_map import segments
from rag_lsp.index.symbol_provider import PATTERNS
from rag_lsp.model import Definition
from rag_lsp.retrieval.query import PLAIN_WORD
from rag_lsp.retrieval.strategies.base import (
    CODE_SAMPLE_FACTOR,
    RELIABILITY,
    Finding,
    Skipped,
    StrategyContext,
    file_stem,
    last_segment,
    specificity,
)

NAME = "symbols"
# Uses count only for names used in at most this many files.
MAX_USE_FILES = 40
# Definitions of a name defined in more files than this say nothing about any one of them.
MAX_DEFINITION_FILES = 40
# A plain word counts only when at most this many files define it.
MAX_WORD_FILES = 5
# A member found by its bare name because nothing matched its qualifier.
LOOSE_MEMBER_FACTOR = 0.5
# Shorter names (``c``, ``id``) are flags and abbreviations more often than symbols.
MIN_NAME_CHARS = 3
_RECEIVERS = frozenset({"self", "this", "cls", "super", "Self"})
_QUALIFIED = re.compile(r"::|\.|#")


def run(ctx: StrategyContext) -> list[Finding]:
    names, words = ctx.query.names, ctx.query.words
    if not names and not words:
        raise Skipped("no names or words that could name a definition")
    # ``sch.load(`` yields both ``sch.load`` and the call ``load``; the member alone is the same mention.
    members = {last_segment(n) for n in names if _QUALIFIED.search(n)}
    # Frames and tool locations are placed by their own strategies; their words here would count them twice.
    evidence = _evidence_words(ctx)
    names = [n for n in names if n not in members and last_segment(n) not in evidence]
    words = [w for w in words if w not in evidence]
    findings: list[Finding] = []
    for name in names:
        if ctx.out_of_time():
            return findings
        if len(name) < MIN_NAME_CHARS:
            continue
        in_prose = ctx.message.in_prose(name)
        factor = 1.0 if in_prose else CODE_SAMPLE_FACTOR
        # A name that is one plain word (`fix`, `Dataset`) is only as telling as the word is rare in the code.
        if PLAIN_WORD.match(name):
            factor *= ctx.rarity(name)
        definitions, fit = _definitions(ctx, name)
        findings += _defined(ctx, name, definitions, fit * factor, in_prose,
                             f"symbol: `{name}` is defined here", MAX_DEFINITION_FILES)
        # Uses matter for the workspace's own names, not for builtins and library names.
        if definitions:
            findings += _used(ctx, name, factor, in_prose)
    for word in words:
        # A plain word ("element") is matched against definitions by the patterns only: a server's answer for
        # it changes no weight worth its call, and the call budget is kept for the names written as code.
        definitions = ctx.patterns.definitions(word)
        if not definitions:
            continue
        in_prose = ctx.message.in_prose(word)
        factor = (1.0 if in_prose else CODE_SAMPLE_FACTOR) * ctx.rarity(word)
        findings += _defined(ctx, word, definitions, factor, in_prose, None, MAX_WORD_FILES,
                             RELIABILITY["word_definition"] / RELIABILITY["definition"])
    return findings


def _evidence_words(ctx: StrategyContext) -> set[str]:
    """The functions and path segments of stack frames and tool locations."""
    functions = {last_segment(f.function) for f in ctx.frames if f.function}
    return functions | {part for path in ctx.evidence_paths() for part in re.split(r"[/\\.]", path) if part}


def _definitions(ctx: StrategyContext, name: str) -> tuple[list[Definition], float]:
    """Definitions a name means, and how well they fit it (1.0, or less for a loose member match).

    A qualified name's definitions must agree with its qualifier: the member
    is inside the qualifying class, or in the file named after it. Without
    such a definition, every definition of the member counts, loosely.
    """
    parts = segments(name.replace("#", "."))
    while len(parts) > 1 and parts[0] in _RECEIVERS:
        parts = parts[1:]
    found = ctx.symbols.definitions(".".join(parts))
    if len(parts) < 2:
        return found, 1.0
    qualifier, member = parts[-2], parts[-1]
    for candidates in (found, ctx.symbols.definitions(member)):
        fitting = [d for d in candidates if _fits(d, qualifier, member)]
        if fitting:
            return fitting, 1.0
    return ctx.symbols.definitions(member), LOOSE_MEMBER_FACTOR


def _fits(definition: Definition, qualifier: str, member: str) -> bool:
    """Whether a definition of ``member`` lies in the class or the file ``qualifier`` names."""
    if definition.name != member:
        return False
    owner = (definition.container or "").rsplit(".", 1)[-1]
    return owner == qualifier or file_stem(definition.path).lower() == qualifier.lower()


def _defined(ctx: StrategyContext, anchor: str, definitions: list[Definition], factor: float, in_prose: bool,
             reason: str | None, max_files: int, kind_factor: float = 1.0) -> list[Finding]:
    """Findings for definitions, each weighed by its source: a language server's counts more than a pattern's."""
    files = {d.path for d in definitions}
    if not files or len(files) > max_files:
        return []
    findings = []
    for d in ctx.capped(definitions):
        source = ctx.symbols.source_of(d)
        reliability = RELIABILITY["definition" if source == PATTERNS else "server_definition"] * kind_factor
        why = reason or f"symbol: '{anchor}' names this {d.kind}"
        findings.append(Finding(path=d.path, strategy=NAME, anchor=anchor,
                                weight=reliability * factor * specificity(len(files)), in_prose=in_prose,
                                reason=why if source == PATTERNS else f"{why} ({source})", line=d.start_line,
                                chunk_id=ctx.definition_chunk(d), source=source))
    return findings


def _used(ctx: StrategyContext, name: str, factor: float, in_prose: bool) -> list[Finding]:
    # A name used in many files is not made into its references only to be dropped (the uses of every provider
    # are the index's, ``langservers/composite.py``).
    if ctx.tables.use_files(last_segment(name)) > MAX_USE_FILES:
        return []
    uses = ctx.symbols.uses(last_segment(name))
    if not uses or len(uses) > MAX_USE_FILES:
        return []
    weight = RELIABILITY["use"] * factor * specificity(len(uses))
    findings = []
    for path in sorted(uses):
        first = min(uses[path], key=lambda r: r.line)
        findings.append(Finding(path=path, strategy=NAME, anchor=name, weight=weight, in_prose=in_prose,
                                reason=f"uses `{name}`", line=first.line, chunk_id=ctx.chunk_at(path, first.line),
                                source=PATTERNS))
    return findings
