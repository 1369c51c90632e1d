"""Fused ranking: run every evidence strategy over the shared index and combine their findings per file.

No single kind of evidence is enough: a trace is precise but may end in a
helper, a named method may be defined twice, BM25 finds words, not causes.
So each strategy reports weighted findings, and a file's score combines
them as independent evidence, 1 − Π(1 − w), counting each anchor of the
message once. Agreement between different anchors raises a file; repeating
one anchor (the same frame twice, a name written five times) does not.

Then the file list is shaped for a reader: tests, examples and prose are
demoted unless the message is about them, files under 30% of the best are
cut and at most 12 are kept, except that the best place of each name the
prose mentions survives the cut (up to 3). Within a file the chunks the
findings point at are returned, best first.
"""

from __future__ import annotations

import logging
import math
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import SymbolProvider
from rag_lsp.model import Chunk
from rag_lsp.path_kinds import is_example_path, is_prose_path, is_test_path
from rag_lsp.retrieval.query import Query
from rag_lsp.retrieval.rank import Cancelled, Candidate, Ranking, RankReport
from rag_lsp.retrieval.ranking.candidates import best_chunks
from rag_lsp.retrieval.ranking.config import (
    DEFAULT_RANKING,
    EVIDENCE_ONLY,
    EXAMPLE_FACTOR,
    PROSE_FACTOR,
    TEST_FACTOR,
    RankingConfig,
)
from rag_lsp.retrieval.ranking.pipeline import ListHook, rank_staged
from rag_lsp.retrieval.strategies import REGISTRY, Budget, Finding, Skipped, Strategy, StrategyContext
from rag_lsp.retrieval.strategies.base import Message

log = logging.getLogger(__name__)

RELATIVE_CUT = 0.3
MAX_FILES = 12
# Names the prose mentions whose best place is kept below the cut.
MENTIONED_KEPT = 3
CHUNKS_PER_FILE = 3
# Files whose places the staged ranking fuses (it has no cut of its own before fusion).
EVIDENCE_FILES = 100


@dataclass(slots=True)
class RankedFile:
    path: str
    score: float
    findings: list[Finding]
    # The heaviest finding of each anchor, heaviest first: what the score combines.
    anchors: list[Finding]
    demotion: str | None = None


class FusionRanker:
    """The default ``Ranker``: evidence strategies combined per file, then the chunks they point at."""

    def __init__(self, strategies: dict[str, Strategy] | None = None, *, budget: Budget | None = None,
                 provider: SymbolProvider | None = None, disabled: frozenset[str] = frozenset(),
                 clock: Callable[[], float] = time.perf_counter,
                 cancelled: Callable[[], bool] | None = None, config: RankingConfig = DEFAULT_RANKING,
                 lists: ListHook | None = None) -> None:
        # The stages after the evidence (``retrieval/ranking/``); EVIDENCE_ONLY is the ranking without them.
        self.config = config
        # Candidate lists beyond the lexical ones (the dense list: ``retrieval/enhance/``).
        self.lists = lists
        self.strategies = {name: run for name, run in (strategies or REGISTRY).items() if name not in disabled}
        self.budget = budget or Budget()
        self.provider = provider
        self.clock = clock
        # Checked before each strategy: a withdrawn question stops at the next step.
        self.cancelled = cancelled

    def rank(self, index: Index, query: Query, limit: int) -> Ranking:
        with index.lock:
            ctx = StrategyContext(index, query, budget=self.budget, provider=self.provider, clock=self.clock)
            run, skipped = self._run_strategies(ctx)
            about_tests = ctx.message.about_tests or "test_to_impl" in run
            # An all-capitals name sends the question to the configuration strategy, but only a variable it found
            # read, set or documented makes the question one about configuration: ``ARG_MAX`` is a constant.
            about_config = ctx.message.about_config or any(f.strategy == "docs_config" for f in ctx.findings)
            files = score_files(ctx.findings, ctx.message, about_tests, about_config)
            if self.config == EVIDENCE_ONLY:
                candidates = evidence_candidates(ctx, cut_files(files))[:limit]
            else:
                evidence = evidence_candidates(ctx, files[:EVIDENCE_FILES])
                candidates = rank_staged(ctx, evidence, limit, self.config, about_config, self.lists, about_tests)
        report = RankReport(tuple(run), tuple(skipped.items()), ctx.truncated, tuple(ctx.symbols.notes()))
        return Ranking(tuple(candidates), report)

    def _run_strategies(self, ctx: StrategyContext) -> tuple[list[str], dict[str, str]]:
        run: list[str] = []
        skipped: dict[str, str] = {}
        for name, strategy in self.strategies.items():
            if self.cancelled is not None and self.cancelled():
                raise Cancelled(f"cancelled before the {name} strategy")
            if ctx.out_of_time():
                skipped[name] = f"the time budget of {self.budget.seconds:g} s was spent"
                continue
            try:
                found = strategy(ctx)
            except Skipped as reason:
                skipped[name] = str(reason)
                continue
            except Exception as exc:
                log.warning("strategy %s failed", name, exc_info=True)
                skipped[name] = f"failed: {exc!r}"
                continue
            run.append(name)
            # Findings are untrusted like the message: only indexed, non-secret files survive.
            ctx.findings.extend(f for f in found if f.path in ctx.index.files and not ctx.tables.is_secret(f.path))
        return run, skipped


def combine(weights: list[float]) -> float:
    """Independent evidence: the chance that at least one finding is right."""
    return 1.0 - math.prod(1.0 - min(max(w, 0.0), 1.0) for w in weights)


def best_per_anchor(findings: list[Finding], by_strategy: bool = False) -> list[Finding]:
    """The heaviest finding of each anchor (the first one on ties), heaviest first.

    With ``by_strategy`` the heaviest of each anchor and strategy: what an
    item's reasons show, while its score counts each anchor once.
    """
    best: dict[tuple[str, str], Finding] = {}
    for finding in findings:
        key = (finding.anchor, finding.strategy if by_strategy else "")
        kept = best.get(key)
        if kept is None or finding.weight > kept.weight:
            best[key] = finding
    return sorted(best.values(), key=lambda f: -f.weight)


def score_files(findings: list[Finding], message: Message, about_tests: bool, about_config: bool) -> list[RankedFile]:
    """Files by combined score with demotions, best first (ties by path); none below zero."""
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_file[finding.path].append(finding)
    files = []
    for path, found in by_file.items():
        factor, demotion = _demotion(path, message, about_tests, about_config)
        anchors = best_per_anchor(found)
        files.append(RankedFile(path, combine([f.weight for f in anchors]) * factor, found, anchors, demotion))
    files.sort(key=lambda f: (-f.score, f.path))
    return [f for f in files if f.score > 0]


def cut_files(files: list[RankedFile]) -> list[RankedFile]:
    """The files within ``RELATIVE_CUT`` of the best, at most ``MAX_FILES``, plus the best place of names the
    prose mentions (the evidence-only ranking; the staged one backfills instead)."""
    if not files:
        return []
    kept = [f for f in files if f.score >= RELATIVE_CUT * files[0].score][:MAX_FILES]
    return sorted(kept + _mentioned_below_cut(files, kept), key=lambda f: (-f.score, f.path))


def rank_files(findings: list[Finding], message: Message, about_tests: bool, about_config: bool) -> list[RankedFile]:
    """Files by combined score with demotions, cut relative to the best, plus the best place of prose names."""
    return cut_files(score_files(findings, message, about_tests, about_config))


def evidence_candidates(ctx: StrategyContext, files: list[RankedFile]) -> list[Candidate]:
    """The chunks the findings of each file point at (else its best BM25 chunk), best first."""
    placed = [(ranked, *_locate(ctx, ranked)) for ranked in files]
    fallback = best_chunks(ctx.index, ctx.query.terms, [ranked.path for ranked, located, _ in placed if not located])
    # The chunks, sorted by their files and lines, are built together: one by one, a first question's five
    # hundred cost it about 3 ms (the ranking weighs them next).
    ids = [chunk_id for _, found, _ in placed for chunk_id in found] + list(fallback.values())
    chunks = dict(zip(ids, ctx.index.chunks.many(ids)))
    candidates = [candidate for ranked, found, unlocated in placed
                  for candidate in _file_candidates(chunks, ranked, found, unlocated, fallback.get(ranked.path))]
    candidates.sort(key=lambda c: (-c.score, chunks[c.chunk_id].path, chunks[c.chunk_id].start_line))
    return candidates


def _mentioned_below_cut(files: list[RankedFile], kept: list[RankedFile]) -> list[RankedFile]:
    """The best file of each anchor the prose names, when the cut dropped it (at most ``MENTIONED_KEPT``)."""
    kept_paths = {f.path for f in kept}
    seen: set[str] = set()
    extra: list[RankedFile] = []
    for ranked in files:
        if len(extra) == MENTIONED_KEPT:
            break
        for finding in ranked.anchors:
            if not finding.in_prose or finding.anchor in seen:
                continue
            seen.add(finding.anchor)
            if ranked.path not in kept_paths and len(extra) < MENTIONED_KEPT:
                extra.append(ranked)
                kept_paths.add(ranked.path)
    return extra


def _demotion(path: str, message: Message, about_tests: bool, about_config: bool) -> tuple[float, str | None]:
    if is_test_path(path) and not about_tests:
        return TEST_FACTOR, f"test file ×{TEST_FACTOR}"
    if is_example_path(path):
        return EXAMPLE_FACTOR, f"example or benchmark ×{EXAMPLE_FACTOR}"
    if is_prose_path(path) and not (message.is_question or about_config):
        return PROSE_FACTOR, f"prose ×{PROSE_FACTOR}"
    return 1.0, None


def _locate(ctx: StrategyContext, ranked: RankedFile) -> tuple[dict[int, list[Finding]], list[Finding]]:
    """A file's findings by the chunk they point at, and those that point at no place in it."""
    located: dict[int, list[Finding]] = defaultdict(list)
    unlocated: list[Finding] = []
    for finding in ranked.findings:
        chunk_id = finding.chunk_id
        if chunk_id is None and finding.line is not None:
            chunk_id = ctx.chunk_at(finding.path, finding.line)
        if chunk_id is None:
            unlocated.append(finding)
        else:
            located[chunk_id].append(finding)
    return located, unlocated


def _file_candidates(chunks: dict[int, Chunk], ranked: RankedFile, located: dict[int, list[Finding]],
                     unlocated: list[Finding], fallback: int | None) -> list[Candidate]:
    """The chunks of one file that its findings point at, best first; the best carries the file's score."""
    best = sorted(((combine([f.weight for f in best_per_anchor(found)]), chunk_id)
                   for chunk_id, found in located.items()),
                  key=lambda item: (-item[0], chunks[item[1]].start_line))[:CHUNKS_PER_FILE]
    if not best:
        if fallback is None:
            return []
        best = [(1.0, fallback)]
    top = best[0][0] or 1.0
    candidates = []
    for position, (weight, chunk_id) in enumerate(best):
        found = best_per_anchor(located.get(chunk_id, []) + (unlocated if position == 0 else []), by_strategy=True)
        why = list(dict.fromkeys(f.reason for f in found))
        if ranked.demotion and position == 0:
            why.append(f"demoted: {ranked.demotion}")
        used = {f.strategy for f in found}
        strategies = [name for name in REGISTRY if name in used]
        sources = sorted({f.source for f in found})
        candidates.append(Candidate(chunk_id, ranked.score * weight / top, why, strategies, sources))
    return candidates
