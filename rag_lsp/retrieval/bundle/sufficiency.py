"""Sufficiency: how complete a bundle is for its task, so that an assistant can ask again with a larger budget.

The template lists what the task needs in priority order; a bundle that holds the first sections has most of
what matters. The score is position-weighted coverage: the i-th section of the template (from 0) weighs
1/(i+1) when the bundle holds it; the code itself adds 0.2 (a summary is not the code), a docstring of more
than 50 characters 0.1 (the intent is stated); the sum is normalised by the most a bundle could get, and
halved for a bundle under 100 characters (a few names say little, whatever sections they fill).
"""

from __future__ import annotations

from collections.abc import Collection

from rag_lsp.retrieval.bundle.templates import Template

SOURCE_BONUS = 0.2
DOCSTRING_BONUS = 0.1
# A docstring longer than this states an intent.
DOCSTRING_CHARS = 50
# A bundle shorter than this (in characters) has its score halved.
SHORT_BUNDLE_CHARS = 100
SHORT_BUNDLE_FACTOR = 0.5


def sufficiency(template: Template, present: Collection[str], has_source: bool, longest_docstring: int,
                bundle_chars: int) -> float:
    """The score in [0, 1], rounded to two decimals: ``present`` are the sections that hold something,
    ``has_source`` whether some place is shown as its code, ``longest_docstring`` the characters of the
    longest docstring shown, ``bundle_chars`` the characters of the bundle."""
    weights = [1 / (position + 1) for position in range(len(template.sections))]
    score = sum(weight for weight, section in zip(weights, template.sections) if section in present)
    score += SOURCE_BONUS if has_source else 0.0
    score += DOCSTRING_BONUS if longest_docstring > DOCSTRING_CHARS else 0.0
    if bundle_chars < SHORT_BUNDLE_CHARS:
        score *= SHORT_BUNDLE_FACTOR
    return round(min(1.0, score / (sum(weights) + SOURCE_BONUS + DOCSTRING_BONUS)), 2)
