"""Query classification: which kind of task a question is (explain, debug, extend, review, locate, general).

The task type decides what the bundle holds and in what order (``templates.py``). Classification is weighted
patterns per type, kept as data in ``rag_lsp/data/tasks.toml`` beside the templates: a question "why does
Ledger.post raise KeyError" matches debug's "why does", "raise" and "KeyError" and nothing else much, and is
debug with full confidence. Confidence says how sure the reader may be:
min(1, score / (0.5 × the type's total weight)) — half the patterns of a type matching is full confidence —
raised by up to 30% of itself when the runner-up is far behind. A request may set the type instead
(``source`` is then ``request`` and the confidence 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from rag_lsp.retrieval.bundle.templates import GENERAL, TASK_TYPES, task_table

# Half a type's total weight is full confidence.
FULL_CONFIDENCE_SHARE = 0.5
# How much a clear lead over the runner-up raises confidence, at most (as a share of itself).
GAP_RAISE = 0.3
# Only the start of a long question and its evidence is read: a pasted log repeats its words.
MAX_CLASSIFIED_CHARS = 4000


@dataclass(frozen=True, slots=True)
class Classification:
    """A question's task type, how confident the classifier is, and whether the request set it instead."""

    task_type: str
    confidence: float
    # ``classified`` or ``request``.
    source: str = "classified"
    # Every type's score, in ``TASK_TYPES`` order (general has none): what the reader sees at diagnostic level.
    scores: tuple[tuple[str, int], ...] = ()


@cache
def _patterns() -> tuple[tuple[str, tuple[tuple[re.Pattern[str], int], ...]], ...]:
    table = task_table()
    return tuple((name, tuple((re.compile(entry["pattern"], re.IGNORECASE), int(entry["weight"]))
                              for entry in table[name]["patterns"])) for name in TASK_TYPES)


def classify(text: str) -> Classification:
    """The task type of a question (with its pasted evidence), by weighted patterns."""
    text = text[:MAX_CLASSIFIED_CHARS]
    scores = [(name, sum(weight for pattern, weight in patterns if pattern.search(text)))
              for name, patterns in _patterns() if patterns]
    best_name, best = max(scores, key=lambda pair: pair[1])
    if best <= 0:
        return Classification(GENERAL, 0.0, scores=tuple(scores))
    total = sum(weight for _, weight in dict(_patterns())[best_name])
    confidence = min(1.0, best / (FULL_CONFIDENCE_SHARE * total))
    runner_up = sorted((score for _, score in scores), reverse=True)[1]
    confidence = min(1.0, confidence * (1 + GAP_RAISE * (1 - runner_up / best)))
    return Classification(best_name, round(confidence, 2), scores=tuple(scores))


def requested(task_type: str) -> Classification:
    """The classification of a question whose request named its task type."""
    return Classification(task_type, 1.0, "request")
