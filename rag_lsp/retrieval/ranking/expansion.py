"""Query expansion without a model: other forms of the question's words, and the words of the best first-pass
places (pseudo-relevance feedback).

A question in prose names behaviour ("how are routes registered"); the code
that does it names itself (``add_api_route``, ``APIRouter``). The best places
of a first pass usually contain those names, so their most distinctive terms
(RM3's idea: frequent in the feedback places, rare in the workspace) are
added to the BM25 query at a lower weight, which finds their siblings. The
number of expansion rounds is the ``expand`` enhancement; zero switches it off.

Before any feedback, prose conjugates what code names in its base form: a
question says "parses", "registered", "handlers" where the code writes
``parse``, ``register``, ``handler``. ``word_variants`` adds the forms of the
question's prose words that the workspace's vocabulary holds (no stemmer in
the index, so postings and scores stay those of the words as written).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from rag_lsp.index.root_index import Index
from rag_lsp.index.terms import tokenize
from rag_lsp.retrieval.query import Query
from rag_lsp.retrieval.ranking.candidates import MIN_PREFIX, STOPWORDS, stem

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


# A word of prose as written: lowercase letters only (``Parser`` or ``parse_args`` are names).
_PROSE_WORD = re.compile(r"(?<![\w`.])[a-z]+(?![\w`(]|\.\w)")
_PARTS = re.compile(r"\.|::|#|_")
# Endings a prose word's stem takes in code: ``parses`` → ``parse``, ``parser``, ``parsing``.
_FORMS = ("", "e", "s", "es", "er", "ers", "or", "ors", "ing", "ings", "ed", "ion", "ions", "ation", "ations",
          "y", "ies", "ment", "ments")


def word_variants(index: Index, query: Query) -> list[str]:
    """Other inflections of the question's prose words that the workspace uses (``parses`` → ``parse``,
    ``parser``): prose conjugates what code names in its base form. A word written as code (a name, a
    backticked or capitalised word) is meant as written. Call under ``index.lock``."""
    asked = set(query.terms)
    variants: dict[str, None] = {}
    for word in prose_words(query):
        root = stem(word)
        if len(root) < MIN_PREFIX:
            continue
        for ending in _FORMS:
            form = root + ending
            if form not in asked and form not in variants and index.bm25.df(form):
                variants[form] = None
    return list(variants)


def prose_words(query: Query) -> list[str]:
    """The question's words written as prose (lowercase, not part of a name it writes as code), without
    stopwords, each once."""
    in_names = {part.lower() for name in query.names for part in _PARTS.split(name)}
    return [word for word in dict.fromkeys(_PROSE_WORD.findall(query.text))
            if word not in in_names and word not in STOPWORDS]
