"""Turn code, prose queries and file paths into lowercase search terms.

A lexical index over code only works if the words a person types reach the
names a programmer wrote: the query "user name" has to meet ``getUserName``,
``user_name`` and ``UserNameField``. So every identifier is indexed twice over:
once whole (an exact-name query should win) and once as the words it is made
of, split on underscores, camel humps, acronym runs and digit runs.

Decisions that callers can observe:

* Digit runs are split off as parts of their own (``sha256`` gives ``sha`` and
  ``256``); like any other token, a part of a single character is dropped, so
  the lone ``2`` of ``parseJSON2Xml`` disappears while ``256`` stays. A token
  that starts with a digit (``404``, ``0xff``, ``100ms``) is kept whole and
  never split; an identifier such as ``E1101`` stays whole as ``e1101`` (and
  also gives its part ``1101``).
* An identifier made only of underscores (``_``, ``__``) gives no token.
* Tokens of one character are dropped: loop variables and the stray letters of
  camel humps (``getX``) match almost everything and say almost nothing.
* ``STOP_WORDS`` is one short list: English function words common in prose
  queries, which double as keywords found in nearly every chunk (``if``,
  ``in``, ``is``, ``for``...), plus ``self`` and ``this``, the receivers that
  begin most method bodies. Words that carry meaning in code (``error``,
  ``none``, ``null``, ``return``, ``get``, ``set``) are kept.
* A path keeps its extension as a token (``py``, ``tsx``): it names the
  language, so "yaml config" can prefer ``config.yaml`` over ``config.py``.

Speed matters because the indexer tokenizes every chunk of a repository: one
precompiled regex finds the tokens, and the splitting of each distinct token is
memoised, since real code repeats the same few thousand names endlessly.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain

# Prose function words and the receivers `self`/`this`, all too common in both
# queries and code to tell one chunk from another.
STOP_WORDS = frozenset(
    {
        "an", "and", "are", "as", "at", "be", "by", "do", "does", "for",
        "from", "how", "if", "in", "into", "is", "it", "its", "of", "on", "or",
        "self", "that", "the", "then", "this", "to", "was", "what", "when",
        "where", "which", "why", "with",
    }
)

# A token is a run of word characters: an identifier starts with a letter or
# underscore (Unicode letters included), a number with a digit and swallows any
# suffix, so `0x1f` is one token. Those two cases together are every run, and
# `\w+` finds them 15% faster than the two alternatives written out (0.85
# against 1.0 s over Django's 33 MB, the same tokens).
_TOKEN_RE = re.compile(r"\w+")

# The memo is bounded so that a huge repository cannot grow it without limit.
# Names repeat by a power law, so a small memo holds the ones that matter: on
# half of Django (2,900 files, the share of one of a cold index's two parse
# workers) 16,384 entries hit 93% of tokens and 131,072 (all 115,000 distinct
# ones) 94.6%, for the same tokenizing time, and the larger memo held 27 MB
# more in every process that tokenizes.
_SPLIT_CACHE_SIZE = 1 << 14


def tokenize(text: str) -> list[str]:
    """Return the search terms of ``text`` in order, duplicates included.

    Duplicates are kept because term frequency is what BM25 weighs.
    """
    return list(chain.from_iterable(map(_terms_of, _TOKEN_RE.findall(text))))


def query_tokens(text: str) -> list[str]:
    """Return the distinct search terms of a query, in first-seen order.

    BM25 counts a repeated query term once per repetition, so without this a
    query would weigh a word double merely because it was typed twice, or
    because it is both a whole identifier and a part of another one
    ("user userId" gives ``user`` twice).
    """
    return list(dict.fromkeys(tokenize(text)))


def path_tokens(path: str) -> list[str]:
    """Return the search terms of a file path: every segment, the stem and the extension.

    ``src/rate_limiter/config.py`` gives ``src``, ``rate_limiter``, ``rate``,
    ``limiter``, ``config`` and ``py``. Both ``/`` and ``\\`` separate segments,
    and dots and dashes inside a file name separate words, exactly as in
    source text, so a path is tokenized like any other text.
    """
    return tokenize(path)


@lru_cache(maxsize=_SPLIT_CACHE_SIZE)
def _terms_of(token: str) -> tuple[str, ...]:
    """Return the kept terms of one regex token: the whole, then its parts.

    A part equal to the whole is not repeated, so a one-word identifier
    yields one term.
    """
    whole = token.lower()
    if token[0].isdecimal():
        return (whole,) if _is_kept(whole) else ()
    parts = [part.lower() for segment in token.split("_") if segment for part in _camel_parts(segment)]
    if not parts:
        # Only underscores, such as a `__` placeholder: there are no words.
        return ()
    terms = [whole] if _is_kept(whole) else []
    if parts != [whole]:
        terms.extend(part for part in parts if _is_kept(part))
    return tuple(terms)


def _is_kept(term: str) -> bool:
    """Say whether a lowercase term is worth indexing."""
    return len(term) > 1 and term not in STOP_WORDS


def _camel_parts(word: str) -> list[str]:
    """Split an underscore-free word at camel humps, acronym ends and digit runs.

    ``HTTPServerError`` gives ``HTTP``, ``Server``, ``Error``: an uppercase run
    ends before its last letter when that letter starts a capitalised word.
    Case tests use ``str.isupper``/``islower`` so that non-ASCII scripts split
    the same way, and caseless scripts are split only at digits.
    """
    if word.isalpha() and word.islower():
        # No digit and no capital: no boundary (most words of paths and code), without a test per letter.
        return [word]
    parts = []
    start = 0
    for i in range(1, len(word)):
        if _is_boundary(word, i):
            parts.append(word[start:i])
            start = i
    parts.append(word[start:])
    return parts


def _is_boundary(word: str, i: int) -> bool:
    """Say whether a new part of ``word`` starts at index ``i`` (``i >= 1``)."""
    prev, cur = word[i - 1], word[i]
    if prev.isdecimal() != cur.isdecimal():
        return True
    if cur.isupper() and prev.islower():
        return True
    return cur.isupper() and prev.isupper() and i + 1 < len(word) and word[i + 1].islower()
