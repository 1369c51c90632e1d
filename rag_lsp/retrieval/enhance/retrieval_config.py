"""The ``retrieval`` settings: which embedder runs, how its list is fused, which language model (if any) the
enhancements may call, and the operator's bounds on the enhancement knobs.

Written in ``.rag-lsp.toml`` as ``[retrieval.dense]``, ``[retrieval.fusion]``,
``[retrieval.llm]`` and ``[retrieval.enhancements]``, or sent by a client as the
``retrieval`` setting (keys already in snake_case when they reach ``parse``).
Every key is optional and keeps its default; an unknown key or a value of the
wrong type is refused with its dotted name. ``enhancements`` (the knobs'
ceilings) is the operator's alone: a client's is ignored with a warning, so that
an editor setting cannot lift what the operator bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from rag_lsp.index.vectors.embedders import BACKENDS, DenseConfig
from rag_lsp.index.vectors.http_json import check_url
from rag_lsp.retrieval.enhance.knobs import SHIPPED_LIMITS, KnobError, Limit, limits_map

FUSION_MODES = ("rrf", "weighted")


class ConfigError(ValueError):
    """A ``retrieval`` setting that cannot be applied; the message names it."""


@dataclass(frozen=True, slots=True)
class FusionConfig:
    """How the dense list joins the lexical ones (``[retrieval.fusion]``).

    ``rrf``: reciprocal-rank fusion where the dense list weighs ``alpha`` of the
    total: score += (1 − α) / (60 + sparse rank + 1) + α / (60 + dense rank + 1).
    ``weighted``: BM25 over chunks is replaced by one list ordered by
    (1 − kw) · cosine + kw · BM25 / best BM25, without the chunks scoring under
    ``min_score``.
    """

    mode: str = "rrf"
    alpha: float = 0.2
    keyword_weight: float = 0.4
    min_score: float = 0.0


@dataclass(frozen=True, slots=True)
class ChatConfig:
    """An OpenAI-compatible chat endpoint the enhancements may call (``[retrieval.llm]``)."""

    url: str
    model: str
    api_key_env: str | None = None
    timeout_ms: int = 10_000
    max_tokens: int = 1024


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    dense: DenseConfig = field(default_factory=DenseConfig)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    llm: ChatConfig | None = None
    limits: tuple[tuple[str, Limit], ...] = SHIPPED_LIMITS


def _string(where: str, value: object) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"setting '{where}' must be a string, got {value!r}")
    return value


def _name(where: str, value: object) -> str | None:
    if value is None or (isinstance(value, str) and value.strip()):
        return value
    raise ConfigError(f"setting '{where}' must be a non-empty string or null, got {value!r}")


def _url(where: str, value: object) -> str | None:
    if value is None:
        return None
    try:
        return check_url(_string(where, value), f"setting '{where}'")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _bool(where: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"setting '{where}' must be true or false, got {value!r}")
    return value


def _between(low: float, high: float, integer: bool = False) -> Callable[[str, object], Any]:
    def check(where: str, value: object) -> Any:
        kinds = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            kind = "an integer" if integer else "a number"
            raise ConfigError(f"setting '{where}' must be {kind} from {low:g} to {high:g}, got {value!r}")
        return value if integer else float(value)
    return check


def _choice(choices: tuple[str, ...]) -> Callable[[str, object], str]:
    def check(where: str, value: object) -> str:
        if value not in choices:
            raise ConfigError(f"setting '{where}' must be one of {', '.join(choices)}, got {value!r}")
        return str(value)
    return check


_DENSE = {"backend": _choice(BACKENDS), "model": _name, "url": _url, "api_key_env": _name,
          "timeout_ms": _between(1, 600_000, True), "query_prefix": _string, "document_prefix": _string,
          "describe": _bool, "batch": _between(1, 4096, True), "ann_threshold": _between(1, 1 << 40, True)}
_FUSION = {"mode": _choice(FUSION_MODES), "alpha": _between(0, 1), "keyword_weight": _between(0, 1),
           "min_score": _between(-1, 1)}
_LLM = {"url": _url, "model": _name, "api_key_env": _name, "timeout_ms": _between(1, 600_000, True),
        "max_tokens": _between(16, 100_000, True)}
SECTIONS = ("dense", "fusion", "llm", "enhancements")


def _section(where: str, raw: object, checks: Mapping[str, Callable[[str, object], Any]]) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"setting '{where}' must be a table, got {raw!r}")
    values = {}
    for key, value in raw.items():
        if key not in checks:
            raise ConfigError(f"setting '{where}': unknown key '{key}' (known: {', '.join(checks)})")
        values[key] = checks[key](f"{where}.{key}", value)
    return values


def parse(raw: object, base: RetrievalSettings, operator: bool) -> tuple[RetrievalSettings, list[str]]:
    """``base`` with the sections of ``raw`` applied key by key; raises ConfigError. Only the ``operator`` may set
    ``enhancements``."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"setting 'retrieval' must be a table of {', '.join(SECTIONS)}, got {raw!r}")
    unknown = sorted(str(key) for key in raw if key not in SECTIONS)
    if unknown:
        raise ConfigError(f"setting 'retrieval': unknown section '{unknown[0]}' (known: {', '.join(SECTIONS)})")
    warnings = []
    settings = base
    if "dense" in raw:
        settings = replace(settings, dense=replace(settings.dense, **_section("retrieval.dense", raw["dense"], _DENSE)))
    if "fusion" in raw:
        settings = replace(settings, fusion=replace(settings.fusion,
                                                    **_section("retrieval.fusion", raw["fusion"], _FUSION)))
    if "llm" in raw:
        # ``null`` (as the status shows a workspace without a model) means no language model.
        settings = replace(settings, llm=None if raw["llm"] is None else _chat(raw["llm"], settings.llm))
    if "enhancements" in raw:
        try:
            limits = limits_map(raw["enhancements"], "retrieval.enhancements")
        except KnobError as exc:
            raise ConfigError(f"setting {exc}") from None
        if operator:
            settings = replace(settings, limits=limits)
        elif limits != settings.limits:
            # A client that sends back the bounds in force (what the status shows) changes nothing: no warning.
            warnings.append("setting 'retrieval.enhancements' is the operator's: set it in .rag-lsp.toml; ignored")
    return settings, warnings


def _chat(raw: object, base: ChatConfig | None) -> ChatConfig | None:
    values = _section("retrieval.llm", raw, _LLM)
    merged = {f.name: getattr(base, f.name) for f in fields(ChatConfig)} if base is not None else {}
    merged.update(values)
    if merged.get("url") is None and merged.get("model") is None:
        return None
    if not merged.get("url") or not merged.get("model"):
        raise ConfigError("setting 'retrieval.llm' needs both 'url' and 'model'")
    return ChatConfig(**merged)
