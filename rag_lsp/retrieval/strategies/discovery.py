"""The fallback when no strategy found anything reliable: the message's words against file paths.

Projects name files after what they do (``rules/L031.py``,
``irradiance.py``, ``rate_limit/``), so a word of the message that appears in
few paths points at them, the more the rarer it is among all paths. This is
weak evidence and runs only when nothing better was found. A word of the
title (an issue's title, a one-line question) counts most, one elsewhere in
the prose less, and one seen only in pasted code least.
"""

from __future__ import annotations

import math

from rag_lsp.index.terms import tokenize
from rag_lsp.retrieval.strategies.base import CODE_SAMPLE_FACTOR, RELIABILITY, Finding, Skipped, StrategyContext

NAME = "discovery"
# A finding at least this heavy, from a strategy other than BM25, is reliable enough to skip discovery.
RELIABLE_WEIGHT = 0.5
# Words in more paths than this share of all files are too common to mean anything.
MAX_PATH_SHARE = 0.05
# Words shorter than this are usually abbreviations that match by accident.
MIN_WORD_CHARS = 3
OUTSIDE_TITLE_FACTOR = 0.5


def run(ctx: StrategyContext) -> list[Finding]:
    if any(f.weight >= RELIABLE_WEIGHT and f.strategy != "bm25" for f in ctx.findings):
        raise Skipped("other strategies found reliable places")
    total = len(ctx.index.files)
    title_words = set(tokenize(ctx.message.title))
    prose_words = set(tokenize(ctx.message.prose))
    findings = []
    for word in dict.fromkeys(ctx.query.terms):
        if len(word) < MIN_WORD_CHARS:
            continue
        files = ctx.tables.files_with_path_word(word)
        if not files or len(files) > max(1, MAX_PATH_SHARE * total) or not ctx.list_files(len(files)):
            continue
        rarity = math.log(total / len(files)) / math.log(total) if total > 1 else 1.0
        # The title says what the message is about; elsewhere a word is as often a passing English word.
        factor = 1.0 if word in title_words else OUTSIDE_TITLE_FACTOR
        weight = RELIABILITY["path_word"] * rarity * factor * (1.0 if word in prose_words else CODE_SAMPLE_FACTOR)
        findings.extend(Finding(path=path, strategy=NAME, anchor=f"path word {word}", weight=weight,
                                reason=f"'{word}' is in its path", in_prose=False) for path in files)
    if not findings:
        raise Skipped("no word of the message is rare among the paths")
    return findings
