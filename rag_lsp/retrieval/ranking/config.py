"""Which ranking stages run and how much each candidate list weighs: the operator's knobs, with defaults.

Every stage can be switched off, so that the benchmarks can measure what it
adds (``docs/benchmarks.md`` has the ablation) and an operator can turn off a
stage that does not suit their code. ``retriever_weights`` scale places by path
glob or definition kind (``{"docs/**": 0.5, "kind:test": 0.3}``): total =
score × max(weight, 0) + edge bonus + centrality bonus.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace

# The candidate lists that reciprocal-rank fusion combines, and their default weights.
LISTS = ("evidence", "bm25_chunks", "bm25_files", "definitions", "path_words")
DEFAULT_LIST_WEIGHTS = (("evidence", 1.0), ("bm25_chunks", 1.0), ("bm25_files", 1.0), ("definitions", 1.0),
                        ("path_words", 1.0))
# What tests, examples and prose count for when the question is not about them: the evidence strategies' files
# (``fusion.py``) and the rerank signals of the same names.
TEST_FACTOR = 0.6
EXAMPLE_FACTOR = 0.7
PROSE_FACTOR = 0.5
# The rerank signals (``rerank.py``) and the factor of each, as designed. A factor of 1 switches a signal off;
# ``SIGNALS`` below switches off by default those the benchmarks showed to lower quality (docs/benchmarks.md).
DESIGNED_SIGNALS = (("definition", 1.3), ("documented", 1.2), ("recent", 1.1), ("verbatim", 1.5), ("kind", 2.0),
                    ("prose", PROSE_FACTOR), ("non_code", 0.6), ("unknown", PROSE_FACTOR), ("minor_language", 0.7),
                    ("header", 0.6), ("secondary", 0.5), ("barrel", 0.7), ("test", TEST_FACTOR),
                    ("example", EXAMPLE_FACTOR), ("platform", 0.7))
OFF_BY_DEFAULT = frozenset({"definition", "documented", "header", "barrel", "kind"})
SIGNALS = tuple((name, 1.0 if name in OFF_BY_DEFAULT else factor) for name, factor in DESIGNED_SIGNALS)
STAGES = ("fusion", "rerank", "graph", "coherence", "companions", "backfill", "dependencies", "window", "expansion",
          "variants")


@dataclass(frozen=True, slots=True)
class RankingConfig:
    """The ranking stack's switches and weights (``[ranking]`` in ``.rag-lsp.toml``, ``ranking`` in settings)."""

    fusion: bool = True
    rerank: bool = True
    graph: bool = True
    coherence: bool = True
    # A strong hit's companion files (its header, its declarations: ``companions.py``) share its score.
    companions: bool = True
    backfill: bool = True
    dependencies: bool = True
    window: bool = True
    # Rounds of pseudo-relevance feedback, each a query variant (the ``expand`` enhancement without a language
    # model sets it); 0 (``without("expansion")``) switches it off.
    expansion: int = 1
    # Other forms of the question's prose words that the workspace uses (``parses`` → ``parse``, ``parser``),
    # added to the BM25 lists' query at half an original word's weight, and the definitions they name listed.
    variants: bool = True
    rrf_k: int = 60
    list_weights: tuple[tuple[str, float], ...] = DEFAULT_LIST_WEIGHTS
    retriever_weights: tuple[tuple[str, float], ...] = ()
    signals: tuple[tuple[str, float], ...] = SIGNALS
    # Context-window optimisation: adjacent places of a file closer than this many lines are merged, places
    # of a file sharing more than this share of their words are duplicates, and a file keeps at most
    # ``max_per_file`` places.
    merge_gap: int = 3
    duplicate_jaccard: float = 0.8
    max_per_file: int = 3

    def weight_of(self, name: str) -> float:
        return dict(self.list_weights).get(name, 0.0)

    def retriever_weight(self, path: str, kind: str) -> float:
        """The product of every configured weight whose glob matches the path or whose ``kind:`` matches."""
        weight = 1.0
        for pattern, value in self.retriever_weights:
            if pattern.startswith("kind:") and pattern[5:] == kind or fnmatch.fnmatchcase(path, pattern):
                weight *= value
        return weight

    def without(self, *stages: str) -> RankingConfig:
        """The same configuration with some stages switched off (for ablations)."""
        unknown = set(stages) - set(STAGES)
        if unknown:
            raise ValueError(f"unknown ranking stages: {', '.join(sorted(unknown))}")
        return replace(self, **{stage: False for stage in stages})


# The ranking before this stack existed: the evidence strategies alone, cut at 30% of the best file.
EVIDENCE_ONLY = RankingConfig().without(*STAGES)
# The stack as shipped.
DEFAULT_RANKING = RankingConfig()


# The keys of the ``ranking`` setting, as editors write them, and the field each sets.
_SWITCHES = {stage: stage for stage in STAGES}
_NUMBERS = {"rrfK": ("rrf_k", int, 1, 1000), "mergeGap": ("merge_gap", int, -1, 200),
            "duplicateJaccard": ("duplicate_jaccard", float, 0.0, 1.0), "maxPerFile": ("max_per_file", int, 1, 100)}
_TABLES = {"listWeights": ("list_weights", LISTS), "signals": ("signals", tuple(n for n, _ in DESIGNED_SIGNALS)),
           "retrieverWeights": ("retriever_weights", None)}


class RankingSettingsError(ValueError):
    """A ``ranking`` setting that cannot be applied, naming the key and the problem."""


def ranking_from_settings(raw: object) -> RankingConfig:
    """The ``ranking`` setting (``[ranking]`` in ``.rag-lsp.toml``) as a ``RankingConfig``; raises ValueError
    naming the bad key. Stages are booleans, ``listWeights``/``signals`` map known names to numbers (a signal's
    factor, 1 switches it off), ``retrieverWeights`` maps path globs or ``kind:<kind>`` to weights."""
    if not isinstance(raw, dict):
        raise RankingSettingsError(f"'ranking' must be an object, got {raw!r}")
    config = DEFAULT_RANKING
    for key, value in raw.items():
        if key in _SWITCHES:
            if not isinstance(value, bool):
                raise RankingSettingsError(f"'ranking.{key}' must be true or false, got {value!r}")
            # ``expansion`` counts rounds: a switch turns it on at one round (``expand`` sets more) or off.
            name = _SWITCHES[key]
            config = replace(config, **{name: int(value) if name == "expansion" else value})
        elif key in _NUMBERS:
            name, kind, low, high = _NUMBERS[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high \
                    or (kind is int and not isinstance(value, int)):
                raise RankingSettingsError(f"'ranking.{key}' must be a number from {low} to {high}, got {value!r}")
            config = replace(config, **{name: kind(value)})
        elif key in _TABLES:
            name, known = _TABLES[key]
            if not isinstance(value, dict) or not all(
                    isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                    for k, v in value.items()):
                raise RankingSettingsError(f"'ranking.{key}' must map names to non-negative numbers, got {value!r}")
            unknown = sorted(set(value) - set(known)) if known else []
            if unknown:
                raise RankingSettingsError(f"'ranking.{key}': unknown {', '.join(unknown)} (known: {', '.join(known or ())})")
            current = dict(getattr(config, name))
            current.update({k: float(v) for k, v in value.items()})
            # Known names keep the shipped order (so a round trip through the status changes nothing); globs sort.
            config = replace(config, **{name: tuple(current.items()) if known else tuple(sorted(current.items()))})
        else:
            known_keys = [*_SWITCHES, *_NUMBERS, *_TABLES]
            raise RankingSettingsError(f"'ranking': unknown key '{key}' (known: {', '.join(known_keys)})")
    return config


def ranking_to_settings(config: RankingConfig) -> dict[str, object]:
    """The inverse of ``ranking_from_settings``: what the status report shows."""
    shown: dict[str, object] = {stage: bool(getattr(config, stage)) for stage in STAGES}
    shown.update({key: getattr(config, name) for key, (name, *_) in _NUMBERS.items()})
    shown.update({key: dict(getattr(config, name)) for key, (name, _) in _TABLES.items()})
    return shown
