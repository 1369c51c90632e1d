"""BM25 over chunks: the words the message shares with the code, as one more strategy among the others.

Every other strategy needs an anchor (a frame, a path, a name); a message
that has none still shares words with the code it is about. BM25 is the
lexical baseline the project was tuned against, so it stays, but as evidence
to combine rather than the ranking itself: a file's weight is its best
chunk's score relative to the best score of all.
"""

from __future__ import annotations

from rag_lsp.retrieval.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext

NAME = "bm25"
# Chunks scored before they are grouped by file.
POOL = 200
# Only the files most likely to be shown get their matching terms spelled out (tokenizing costs time).
EXPLAINED_FILES = 15
EXPLAINED_TERMS = 8


def run(ctx: StrategyContext) -> list[Finding]:
    terms = list(ctx.query.terms)
    if not terms:
        raise Skipped("the message has no searchable words")
    hits = ctx.index.bm25.top_k(terms, POOL)
    if not hits or hits[0][1] <= 0:
        raise Skipped("no chunk shares a word with the message")
    top = hits[0][1]
    best: dict[str, tuple[int, float]] = {}
    # The paths are read from the chunk table's columns: building 200 chunks cost a first question 10 ms.
    for (chunk_id, score), path in zip(hits, ctx.index.chunks.paths_of([chunk_id for chunk_id, _ in hits])):
        if score > 0 and path is not None and path not in best:
            best[path] = (chunk_id, score)
    wanted = set(terms)
    findings = []
    for rank, (path, (chunk_id, score)) in enumerate(best.items()):
        reason = f"bm25 {score:.2f}"
        if rank < EXPLAINED_FILES:
            # The chunk's BM25 terms are its text's and its path's tokens.
            shared = ctx.index.bm25.shared_terms(chunk_id, wanted)
            reason += f": matches {', '.join(sorted(shared)[:EXPLAINED_TERMS])}"
        findings.append(Finding(path=path, strategy=NAME, anchor="bm25", weight=RELIABILITY["bm25"] * score / top,
                                reason=reason, chunk_id=chunk_id))
    return findings
