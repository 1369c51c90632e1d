"""Query expansion without a model: the words of the best first-pass places (pseudo-relevance feedback).

A question in prose names behaviour ("how are routes registered"); the code
that does it names itself (``add_api_route``, ``APIRouter``). The best places
of a first pass usually contain those names, so their most distinctive terms
(RM3's idea: frequent in the feedback places, rare in the workspace) are
added to the BM25 query at a lower weight, which finds their siblings. The
number of expansion rounds is the ``expand`` enhancement; zero switches it off.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from rag_lsp.index.root_index import Index
from rag_lsp.index.terms import tokenize

# Places read for feedback, terms added per round, and how often an added term counts against an original one.
FEEDBACK_PLACES = 5
TERMS_PER_ROUND = 8
MIN_TERM_CHARS = 3
# A term in more than this share of the chunks (``self``, ``return``) says nothing about a place.
MAX_DF_SHARE = 0.05


def feedback_terms(index: Index, chunk_ids: Sequence[int], query_terms: Sequence[str], rounds: int = 1) -> list[str]:
    """Terms of the first ``FEEDBACK_PLACES`` chunks that are frequent there and rare in the workspace, not
    already in the question, at most ``TERMS_PER_ROUND × rounds``; call under ``index.lock``."""
    if rounds <= 0 or not chunk_ids:
        return []
    asked = set(query_terms)
    counts: Counter[str] = Counter()
    for chunk_id in chunk_ids[:FEEDBACK_PLACES]:
        chunk = index.chunks.get(chunk_id)
        if chunk is not None:
            counts.update(term for term in tokenize(chunk.content) if len(term) >= MIN_TERM_CHARS and term not in asked)
    total = max(len(index.bm25), 1)
    weighted = []
    for term, count in counts.items():
        df = index.bm25.df(term)
        if df and df <= MAX_DF_SHARE * total:
            weighted.append((count * math.log(1 + total / df), term))
    weighted.sort(key=lambda item: (-item[0], item[1]))
    return [term for _, term in weighted[:TERMS_PER_ROUND * rounds]]
