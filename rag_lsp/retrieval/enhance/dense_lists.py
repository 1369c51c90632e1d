"""The dense side as candidate lists for the ranking stack, and how they are weighed against the lexical ones.

Two fusion modes (``FusionConfig``):

- ``rrf``: the vector search's chunks are one more ranked list, weighted so that
  it carries α of the fused total and the lexical lists 1 − α: with one lexical
  list this is score += (1 − α) / (60 + sparse rank + 1) + α / (60 + dense rank + 1).
  The list is ``limit × 3`` deep; several query vectors (variants, hypothetical
  documents) are merged by each chunk's best rank first.
- ``weighted``: BM25 over chunks is replaced by one list ordered by
  (1 − kw) · cosine + kw · BM25 / best BM25 over the union of both sides' top
  chunks, less those scoring under ``min_score``.

A hit unknown to the chunk table (a chunk removed since it was embedded) or on
a secret path is skipped without taking a rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from rag_lsp.index.root_index import Index
from rag_lsp.index.tables import WorkspaceTables
from rag_lsp.index.vectors.embedding import VectorIndex
from rag_lsp.retrieval.enhance.retrieval_config import FusionConfig
from rag_lsp.retrieval.ranking.candidates import Listed
from rag_lsp.retrieval.ranking.config import RankingConfig

# Each side contributes this many candidates per place asked for.
DEPTH_PER_PLACE = 3
DENSE = "dense"
HYBRID = "hybrid"


def depth(limit: int) -> int:
    return limit * DEPTH_PER_PLACE


def known(index: Index, tables: WorkspaceTables, chunk_id: int) -> bool:
    chunk = index.chunks.get(chunk_id)
    return chunk is not None and not tables.is_secret(chunk.path)


def nearest(index: Index, tables: WorkspaceTables, vectors: VectorIndex, query: np.ndarray, count: int,
            label: str) -> list[Listed]:
    """The ``count`` chunks nearest to a unit ``query`` vector; unknown and secret hits take no rank. Call under
    the index's lock."""
    found = []
    # Ask for more than needed, since unknown hits are skipped without taking a rank.
    for chunk_id, score in vectors.search(query, count * 2):
        if known(index, tables, chunk_id):
            found.append(Listed(chunk_id, f"{label} cosine {score:.2f}"))
            if len(found) == count:
                break
    return found


def merge_best_rank(found: Sequence[Sequence[Listed]], count: int) -> list[Listed]:
    """Several lists as one, each chunk at its best rank in any of them (ties: the earlier list), deduplicated."""
    best: dict[int, tuple[int, int, Listed]] = {}
    for number, listed in enumerate(found):
        for rank, item in enumerate(listed):
            if item.chunk_id not in best or (rank, number) < best[item.chunk_id][:2]:
                best[item.chunk_id] = (rank, number, item)
    ordered = sorted(best.values(), key=lambda entry: (entry[0], entry[1], entry[2].chunk_id))
    return [item for _, _, item in ordered[:count]]


def weighted_list(index: Index, tables: WorkspaceTables, vectors: VectorIndex, query: np.ndarray,
                  terms: Sequence[str], count: int, fusion: FusionConfig) -> list[Listed]:
    """BM25 and cosine in one score, (1 − kw) · cosine + kw · BM25 / best BM25, over both sides' top ``count``."""
    keyword = dict(index.bm25.top_k(list(terms), count)) if terms else {}
    top_keyword = max(keyword.values(), default=0.0)
    nearest = [chunk_id for chunk_id, _ in vectors.search(query, count)]
    candidates = [chunk_id for chunk_id in dict.fromkeys([*keyword, *nearest]) if known(index, tables, chunk_id)]
    cosines = vectors.similarity(candidates, query)
    kw = fusion.keyword_weight
    scored = []
    for chunk_id in candidates:
        normalised = keyword.get(chunk_id, 0.0) / top_keyword if top_keyword > 0 else 0.0
        score = (1 - kw) * max(cosines.get(chunk_id, 0.0), 0.0) + kw * normalised
        if score >= fusion.min_score and score > 0:
            scored.append((score, chunk_id))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [Listed(chunk_id, f"hybrid {score:.2f} (cosine and BM25)") for score, chunk_id in scored[:count]]


def fused_config(config: RankingConfig, fusion: FusionConfig, extra: Sequence[tuple[str, float]] = ()
                 ) -> RankingConfig:
    """The ranking's list weights with the dense side in: ``rrf`` gives the dense list α of the total weight
    (the lexical lists share 1 − α); ``weighted`` gives the hybrid list the weight of BM25 over chunks, which it
    replaces. ``extra`` lists (query variants, hypothetical documents) keep their weights."""
    weights = list(config.list_weights)
    if fusion.mode == "weighted":
        keyword = config.weight_of("bm25_chunks")
        weights = [(name, 0.0 if name == "bm25_chunks" else weight) for name, weight in weights]
        weights.append((HYBRID, keyword))
    else:
        total = sum(weight for _, weight in weights if weight > 0)
        weights = [(name, weight * (1 - fusion.alpha)) for name, weight in weights]
        weights.append((DENSE, fusion.alpha * total))
    return replace(config, list_weights=tuple(weights) + tuple(extra))
