"""The ranking stack: from the evidence strategies' places and the other candidate lists to a full answer.

1. **Fusion.** The evidence places (noisy-OR of the strategies' findings), BM25
   over chunks, BM25 over whole files, definition matches and files named for
   the question's words are ranked lists; reciprocal-rank fusion (k = 60, a
   weight per list) combines them, each place counted at its rank in each
   list, scaled so that first place in every list is 1.
   The evidence score stays the strongest signal: everything but the evidence
   (the fused rank, and the graph and coherence bonuses below) makes one
   "lexical" share that joins the evidence as one more independent piece of
   it, ``1 − (1 − evidence)(1 − lexical)``; a stack frame's 0.95 barely moves,
   a question without anchors is ordered by the rest.
2. **Expansion.** The BM25 lists' query holds, besides the question's words,
   the other forms of its prose words that the workspace uses (``parses`` →
   ``parse``, ``parser``; ``word_variants``, at half weight), and the
   definitions list holds the types and functions those words name
   (``Parser``). The distinctive terms of the best first-pass places are then
   added to the query (pseudo-relevance feedback), and the lists fused again.
3. **Rerank** by deterministic signals (``rerank.py``).
4. **Graph.** A centrality prior and an edge bonus for files linked to strong
   hits (``centrality.py``), added to the lexical share; retriever weights per
   path glob or kind: total = score × max(weight, 0) + edge bonus + centrality
   bonus.
5. **Coherence.** A file with several matching places lifts its best one (in
   the lexical share).
6. **Selection.** Places in order of score, each further place of an already
   chosen file, or of a version or translation of one (``path_kinds.copy_family``:
   ``docs/v1.5/manual.yml`` beside ``docs/v1.6/manual.yml``), counting for less
   (saturation, with coherence's switch); what falls below the relative
   cut backfills the answer up to the limit, marked as lower confidence.
7. **Dependencies.** The definitions the top places use from other files come
   after the ranked places, labelled as dependencies.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rag_lsp.index.root_index import Index
from rag_lsp.path_kinds import PathKind, copy_family
from rag_lsp.retrieval.rank import Candidate
from rag_lsp.retrieval.ranking import candidates as lists
from rag_lsp.retrieval.ranking.centrality import dependencies, question_graph
from rag_lsp.retrieval.ranking.companions import companions
from rag_lsp.retrieval.ranking.config import RankingConfig
from rag_lsp.retrieval.ranking.expansion import feedback_terms, prose_words, word_variants
from rag_lsp.retrieval.ranking.rerank import PathTraits, factors, path_traits, read_signals
from rag_lsp.retrieval.strategies.base import StrategyContext

# The lists read from the question itself rather than from the BM25 query: their reasons say nothing of its forms.
_FROM_QUESTION = frozenset({"definitions", "path_words"})
# Word forms named in a place's reasons (a question's words may have a dozen).
SHOWN_FORMS = 4
# How much a place found by every list at first rank counts, as a piece of evidence.
FUSION_SHARE = 0.6
# The lexical share never reaches certainty: evidence can always tell two places apart.
MAX_LEXICAL = 0.95
# Evidence places fused (the rest of the evidence list is far below the answer).
EVIDENCE_DEPTH = 200
# Graph bonuses, in the lexical share: a linked file of a strong hit (scaled by the hit), the most central file.
EDGE_BONUS = 0.05
CENTRALITY_BONUS = 0.05
# A strong hit's companion file gains this much lexical share, scaled by the hit (``companions.py``).
COMPANION_BONUS = 0.2
# A hit this close to the best is strong enough to lend its neighbours the edge bonus, and its companions theirs.
STRONG_HIT = 0.5
STRONG_HITS = 5
# A file's best place gains this much lexical share, scaled by the file's total against the top file's.
COHERENCE = 0.2
# Each further place of a file already in the answer counts this much less, cumulatively.
SATURATION = 0.5
# Places below this share of the best are lower confidence (the evidence ranking's relative cut).
RELATIVE_CUT = 0.3
# Places whose dependencies are added, and dependencies at most.
DEPENDENCY_PLACES = 3
MAX_DEPENDENCIES = 3
# More candidate lists for each pass, by name, given the pass's BM25 terms and whether it is a rerun.
ListHook = Callable[[Sequence[str], bool], dict[str, list[lists.Listed]]]


@dataclass(slots=True)
class _Place:
    chunk_id: int
    path: str
    evidence: float = 0.0
    # Everything else that speaks for the place, as one share (see the module docstring).
    lexical: float = 0.0
    # The rerank signals' and retriever weights' product.
    factor: float = 1.0
    bonus: float = 0.0
    why: list[str] = field(default_factory=list)
    strategies: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    listed: dict[str, tuple[int, str]] = field(default_factory=dict)

    @property
    def score(self) -> float:
        lexical = min(self.lexical + self.bonus, MAX_LEXICAL)
        return (1 - (1 - self.evidence) * (1 - lexical)) * self.factor


def rank_staged(ctx: StrategyContext, evidence: list[Candidate], limit: int, config: RankingConfig,
                about_config: bool, lists: ListHook | None = None, about_tests: bool = False) -> list[Candidate]:
    """The ranked places (at most ``limit``, then the dependencies); call under the index's lock. ``lists`` adds
    candidate lists of its own to each pass (the dense list, ``retrieval/enhance/``), weighed by ``config``."""
    index = ctx.index
    places: dict[int, _Place] = {}
    for candidate in evidence[:EVIDENCE_DEPTH]:
        place = _place(ctx, places, candidate.chunk_id)
        place.evidence = candidate.score
        place.why += candidate.why
        place.strategies += candidate.strategies
        place.sources += candidate.sources
    ranked_lists = {"evidence": [c.chunk_id for c in evidence[:EVIDENCE_DEPTH]]}
    if config.fusion:
        terms = list(ctx.query.terms)
        # Other forms of the question's prose words count half as much as the words themselves. They serve a
        # question of one line, as asked of a search box: an issue's title and body, however short, bring the
        # code's own words in several forms already, and the forms cost those answers (docs/benchmarks.md).
        with_forms = config.variants and not ctx.message.is_report and ctx.message.one_line
        variants = word_variants(index, ctx.query) if with_forms else []
        forms = f"word forms: {', '.join(variants[:SHOWN_FORMS])}" if variants else ""
        named = prose_words(ctx.query) + variants if with_forms else []
        _listed(ctx, places, ranked_lists, terms * 2 + variants if variants else terms, f" ({forms})" if forms else "",
                named=named, hook=lists)
        _fuse(places, ranked_lists, config)
        # Each round is one more query variant: the terms of the places the previous round put first. A report
        # brings the code's own words already (names, messages, paths), and feedback from its first places only
        # repeats them (docs/benchmarks.md, the stage ablation), so only questions get the rounds.
        for rounds in range(1, (0 if ctx.message.is_report else config.expansion) + 1):
            first = sorted(places.values(), key=lambda p: (-p.score, p.path, p.chunk_id))
            extra = feedback_terms(index, [p.chunk_id for p in first], terms + variants, rounds)
            if not extra:
                break
            _listed(ctx, places, ranked_lists, terms * 2 + variants + extra,
                    f" (expanded query, {forms})" if forms else " (expanded query)", rerun=True, hook=lists)
            _fuse(places, ranked_lists, config)
    if config.rerank:
        _rerank(ctx, places, about_config, about_tests, dict(config.signals))
    _weigh(index, places, config)
    # The graph's centrality and a file's coherence favour central files with many matching places: what a
    # question about how the code works wants, and noise for a report, whose evidence already names its places
    # (docs/benchmarks.md, the stage ablation).
    if config.graph and not ctx.message.is_report:
        _graph_bonus(ctx, places)
    if config.coherence and not ctx.message.is_report:
        _coherence(places)
    if config.companions:
        _companion_bonus(ctx, places)
    chosen = _select(places, limit, config)
    if config.dependencies:
        chosen += _dependencies(ctx, chosen, places)
    return chosen


def _place(ctx: StrategyContext, places: dict[int, _Place], chunk_id: int, path: str | None = None) -> _Place:
    """The place of a chunk, made on first sight (``path`` is its file, when the caller has read it already)."""
    place = places.get(chunk_id)
    if place is None:
        place = places[chunk_id] = _Place(chunk_id, path if path is not None else ctx.index.chunks.path_of(chunk_id))
    return place


def _listed(ctx: StrategyContext, places: dict[int, _Place], ranked: dict[str, list[int]], terms: list[str],
            note: str = "", rerun: bool = False, named: Sequence[str] = (), hook: ListHook | None = None) -> None:
    """Fill the BM25 and definition lists (the BM25 ones again with the expanded terms when ``rerun``), and the
    hook's lists (what it returns on a rerun replaces its earlier list of that name); ``note`` ends the BM25
    lists' reasons (how their query was made), and ``named`` are words whose definitions the definitions list
    also holds."""
    found = {"bm25_chunks": lists.bm25_chunks(ctx.index, terms), "bm25_files": lists.bm25_files(ctx.index, terms)}
    if not rerun:
        found["definitions"] = lists.definitions(ctx.index, ctx.query, named)
        found["path_words"] = lists.path_words(ctx.index, ctx.tables, ctx.query)
    if hook is not None:
        found.update(hook(terms, rerun))
    chunks = ctx.index.chunks
    for name, listed in found.items():
        ranked[name] = [item.chunk_id for item in listed]
        # The definitions and path words read the question itself, not the terms.
        suffix = "" if name in _FROM_QUESTION else note
        for position, (item, path) in enumerate(zip(listed, chunks.paths_of(ranked[name])), 1):
            # A place the evidence or an earlier list made is taken as it is; a new one must be a live chunk of a
            # file that is not secret.
            if item.chunk_id not in places and (path is None or ctx.tables.is_secret(path)):
                continue
            _place(ctx, places, item.chunk_id, path).listed[name] = (position, item.reason + suffix)


def _fuse(places: dict[int, _Place], ranked: dict[str, list[int]], config: RankingConfig) -> None:
    """Reciprocal-rank fusion of the lists, joined to the evidence as one more piece of evidence."""
    weights = {name: config.weight_of(name) for name in ranked}
    best = sum(w / (config.rrf_k + 1) for w in weights.values() if w > 0) or 1.0
    evidence_ranks = {chunk_id: position for position, chunk_id in enumerate(ranked["evidence"], 1)}
    for place in places.values():
        total = weights.get("evidence", 0.0) / (config.rrf_k + evidence_ranks[place.chunk_id]) \
            if place.chunk_id in evidence_ranks else 0.0
        for name, (position, _) in place.listed.items():
            total += weights.get(name, 0.0) / (config.rrf_k + position)
        place.lexical = FUSION_SHARE * total / best


def _rerank(ctx: StrategyContext, places: dict[int, _Place], about_config: bool, about_tests: bool,
            weights: dict[str, float]) -> None:
    signals = read_signals(ctx.index, ctx.query, ctx.message, about_config, about_tests)
    chunks, files = ctx.index.chunks, ctx.index.files
    # Whether a file has a definition (for the header signal, when it is on), kept until a file changes: a file
    # of prose has hundreds of chunks to look through, question after question.
    defines = ctx.tables.memo("files with definitions", dict[str, bool])
    if weights.get("header", 1.0) != 1.0:
        for path in {p.path for p in places.values()} - defines.keys():
            defines[path] = path in files and any(chunks.has_symbol(i) for i in files[path].chunk_ids)
    kinds_of_paths = ctx.tables.memo("path kinds", dict[str, PathKind], paths_only=True)
    traits: dict[str, PathTraits] = {}
    # The places' chunks are built together: one by one, a first question's few hundred cost it 7 ms.
    for place, chunk in zip(places.values(), chunks.many(list(places))):
        kinds = traits.get(place.path)
        if kinds is None:
            kind_of_path = kinds_of_paths.get(place.path)
            if kind_of_path is None:
                kind_of_path = kinds_of_paths[place.path] = PathKind.of(place.path)
            kinds = traits[place.path] = path_traits(ctx.index, place.path, kind_of_path, signals)
        for factor, reason in factors(chunk, signals, kinds, defines.get(place.path, False), weights):
            place.factor *= factor
            place.why.append(f"rerank: {reason} ×{factor:g}")


def _weigh(index: Index, places: dict[int, _Place], config: RankingConfig) -> None:
    if not config.retriever_weights:
        return
    for place in places.values():
        weight = config.retriever_weight(place.path, index.chunks[place.chunk_id].kind)
        if weight != 1.0:
            place.factor *= max(weight, 0.0)
            place.why.append(f"retriever weight ×{weight:g}")


def _graph_bonus(ctx: StrategyContext, places: dict[int, _Place]) -> None:
    if not places:
        return
    code = question_graph(ctx.index)
    top, strong, _ = _strong_hits(places)
    lent: dict[str, tuple[float, str]] = {}
    for score, hit in strong:
        for neighbour in code.neighbours.get(hit.path, ()):
            if neighbour != hit.path and score > lent.get(neighbour, (0.0, ""))[0]:
                lent[neighbour] = (score, hit.path)
    for place in places.values():
        place.bonus += CENTRALITY_BONUS * code.centrality.get(place.path, 0.0)
        if place.path in lent:
            score, source = lent[place.path]
            place.bonus += EDGE_BONUS * score / top
            place.why.append(f"graph: linked to {source}")


def _strong_hits(places: dict[int, _Place]) -> tuple[float, list[tuple[float, _Place]], dict[str, _Place]]:
    """The best score, the best places of the ``STRONG_HITS`` best files within ``STRONG_HIT`` of it (best first,
    ties by path), and every file's best place: the hits that lend the graph's and the companions' bonuses, each
    reading the scores once, before its own bonus changes any."""
    scored = sorted(((place.score, place) for place in places.values()),
                    key=lambda item: (-item[0], item[1].path, item[1].chunk_id))
    top = scored[0][0] if scored else 0.0
    best: dict[str, _Place] = {}
    for _, place in scored:
        best.setdefault(place.path, place)
    if top <= 0:
        return top, [], best
    firsts = [item for item in scored if best[item[1].path] is item[1]][:STRONG_HITS]
    return top, [(score, hit) for score, hit in firsts if score >= STRONG_HIT * top], best


def _companion_bonus(ctx: StrategyContext, places: dict[int, _Place]) -> None:
    """The companion of a strong hit's file (its header, its declarations, its grammar: ``companions.py``) gains
    a share of the hit's score at its best place, or at its best BM25 chunk when it had none."""
    if not places:
        return
    top, strong, best = _strong_hits(places)
    # For a question, the stronger of two companions lifts the weaker, not the other way too: lending both ways
    # counts one piece of evidence twice (a header and its source lifting each other above the place that
    # explains). A report's fix changes the pair together as often as not, so there both are lifted
    # (docs/benchmarks.md, "Twelfth session").
    standing = {} if ctx.message.is_report else {hit.path: score for score, hit in strong}
    lent: dict[str, tuple[float, str]] = {}
    for score, hit in strong:
        for other in companions(ctx.tables, hit.path):
            if (other not in lent and standing.get(other, -1.0) < score
                    and not ctx.tables.is_secret(other)):
                lent[other] = (score, hit.path)
    missing = [path for path in lent if path not in best]
    for path, chunk_id in lists.best_chunks(ctx.index, ctx.query.terms, missing).items():
        best[path] = _place(ctx, places, chunk_id, path)
    for path, (score, source) in lent.items():
        if path in best:
            best[path].bonus += COMPANION_BONUS * score / top
            best[path].why.append(f"companion of {source}")


def _coherence(places: dict[int, _Place]) -> None:
    """A file with several strong places lifts its best one; only strong places count, so a long file that
    shares a few words with everything does not win by its size."""
    if not places:
        return
    # Each place's score, read once: a bonus below changes only its file's best place, after its file is read.
    scored = [(place.score, place) for place in places.values()]
    top = max(score for score, _ in scored)
    by_file: dict[str, list[tuple[float, _Place]]] = defaultdict(list)
    for score, place in scored:
        if score >= RELATIVE_CUT * top:
            by_file[place.path].append((score, place))
    totals = {path: sum(score for score, _ in found) for path, found in by_file.items()}
    top_total = max(totals.values(), default=0.0) or 1.0
    for path, found in by_file.items():
        if len(found) > 1:
            best = max(found, key=lambda item: (item[0], -item[1].chunk_id))[1]
            best.bonus += COHERENCE * totals[path] / top_total
            best.why.append(f"coherence: {len(found)} strong places in this file")


def _select(places: dict[int, _Place], limit: int, config: RankingConfig) -> list[Candidate]:
    """Greedy selection with saturation; below the relative cut, backfill marked as lower confidence."""
    ordered = sorted(((place.score, place) for place in places.values()),
                     key=lambda item: (-item[0], item[1].path, item[1].chunk_id))
    if not ordered or ordered[0][0] <= 0:
        return []
    best = ordered[0][0]
    taken: dict[str, int] = defaultdict(int)
    # Files already taken from each family of parallel copies (versions, translations: ``copy_family``).
    copies: dict[str, set[str]] = defaultdict(set)
    scored = []
    for score, place in ordered:
        if score <= 0:
            break
        family = copy_family(place.path)
        others = len(copies[family] - {place.path}) if family is not None else 0
        decay = SATURATION ** (taken[place.path] + others) if config.coherence else 1.0
        taken[place.path] += 1
        if family is not None:
            if others and config.coherence:
                place.why.append("saturation: another version of this file ranks higher" if others == 1 else
                                 f"saturation: {others} other versions of this file rank higher")
            copies[family].add(place.path)
        scored.append((score * decay, place))
    scored.sort(key=lambda item: (-item[0], item[1].path, item[1].chunk_id))
    chosen = []
    for score, place in scored:
        below = score < RELATIVE_CUT * best
        if below and not config.backfill:
            break
        if len(chosen) == limit:
            break
        why = list(dict.fromkeys(place.why + [f"{name} #{position}: {reason}"
                                              for name, (position, reason) in sorted(place.listed.items())]))
        if below:
            why.append("lower confidence: below the relative cut, backfilled")
        strategies = list(dict.fromkeys(place.strategies + [name for name in place.listed]))
        sources = sorted(set(place.sources) | ({"index"} if place.listed else set()))
        chosen.append(Candidate(place.chunk_id, score, why, strategies, sources))
    return chosen


def _dependencies(ctx: StrategyContext, chosen: list[Candidate], places: dict[int, _Place]) -> list[Candidate]:
    index = ctx.index
    # Which of the ranked places an answer shows is decided when it is packed, which also drops a dependency
    # that is shown already; here only a place's own file, and files given already, are left out.
    given: set[str] = set()
    found = []
    for candidate in chosen[:DEPENDENCY_PLACES]:
        chunk = index.chunks[candidate.chunk_id]
        for definition in dependencies(index, chunk.path, chunk.start_line, chunk.end_line, given | {chunk.path}):
            given.add(definition.path)
            chunk_id = index.definition_chunk(definition)
            if chunk_id is None or ctx.tables.is_secret(definition.path):
                continue
            why = [f"dependency: {chunk.qualname or chunk.path} uses {definition.qualname}"]
            found.append(Candidate(chunk_id, 0.0, why, ["dependencies"], ["index"], role="dependency"))
            if len(found) == MAX_DEPENDENCIES:
                return found
    return found
