"""Token counts for budgeting context.

An estimate until a real tokenizer lands: BPE tokenizers used by current
code models spend about one token per identifier piece, number or
punctuation mark, and about four characters per token on prose, so the
estimate takes the larger of the two. It errs on the high side so that a
packed context stays within the caller's budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_PIECES = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")


def estimate_tokens(text: str) -> int:
    """Estimated number of model tokens in ``text`` (0 for empty text)."""
    if not text:
        return 0
    return max(len(_PIECES.findall(text)), (len(text) + 3) // 4)


def truncate_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of whole lines of ``text`` whose estimate fits ``budget``."""
    return "".join(leading_lines(estimate_tokens, text, budget)).rstrip("\n")


def leading_lines(count: Callable[[str], int], text: str, budget: int) -> list[str]:
    """The first lines of ``text`` (with their line ends) while the sum of their ``count`` fits ``budget``."""
    kept: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        cost = count(line)
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return kept
