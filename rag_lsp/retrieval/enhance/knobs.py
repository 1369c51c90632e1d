"""The enhancement knobs of one question and how their effective values are resolved.

Three knobs bound how much work a question may cost beyond the lexical ranking:
``expand`` (query variants), ``hyde`` (hypothetical documents) and ``rerank``.
The operator writes a ``{default, max}`` pair per knob (``[retrieval.enhancements]``
in ``.rag-lsp.toml``); a client's settings and each request may set a value.
The value in force is the request's if set, else the client's, else the
operator's default, and it is then clamped to the operator's ceiling: an
integer to ``min(max(0, raw), max)``, a boolean to ``raw and max``. A request
above the ceiling (an agent asking for ten variants) is clamped, not refused,
since the ceiling is the operator's business and the question still deserves an
answer; a value of the wrong type or an unknown knob is refused with a message
naming it, since that is a mistake the caller can fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

KNOBS = ("expand", "hyde", "rerank")
# Which knobs are integers (the others are booleans).
INTEGER_KNOBS = frozenset({"expand", "hyde"})
# Anything above this is a mistake rather than a wish; the operator's ceiling is far lower in practice.
MAX_INTEGER = 100

KnobValue = int | bool


class KnobError(ValueError):
    """A knob map that cannot be used; the message names the knob and what it must be."""


@dataclass(frozen=True, slots=True)
class Limit:
    """The operator's default and ceiling of one knob."""

    default: KnobValue
    max: KnobValue


# The shipped operator configuration: one query variant (pseudo-relevance feedback), no hypothetical
# documents, the signal rerank.
SHIPPED_LIMITS: tuple[tuple[str, Limit], ...] = (("expand", Limit(1, 3)), ("hyde", Limit(0, 1)),
                                                 ("rerank", Limit(True, True)))


@dataclass(frozen=True, slots=True)
class Resolved:
    """One knob's value in force, where it came from, what was asked and whether the ceiling cut it."""

    name: str
    value: KnobValue
    source: str
    requested: KnobValue
    max: KnobValue

    @property
    def clamped(self) -> bool:
        return self.value != self.requested


def knob_value(name: str, value: object, where: str) -> KnobValue:
    """``value`` checked as knob ``name``'s type; ``where`` names it in the error (``enhancements.expand``)."""
    if name not in KNOBS:
        raise KnobError(f"unknown enhancement '{where}' (known: {', '.join(KNOBS)})")
    if name in INTEGER_KNOBS:
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_INTEGER:
            raise KnobError(f"'{where}' must be an integer (at most {MAX_INTEGER}), got {value!r}")
        return value
    if not isinstance(value, bool):
        raise KnobError(f"'{where}' must be true or false, got {value!r}")
    return value


def knob_map(raw: object, where: str) -> dict[str, KnobValue]:
    """A map of knob values (a request's or a client's), every key known and every value of its type."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise KnobError(f"'{where}' must be an object with {', '.join(KNOBS)}, got {raw!r}")
    unknown = sorted(str(key) for key in raw if key not in KNOBS)
    if unknown:
        raise KnobError(f"'{where}': unknown enhancement {', '.join(repr(k) for k in unknown)} "
                        f"(known: {', '.join(KNOBS)})")
    return {name: knob_value(name, value, f"{where}.{name}") for name, value in raw.items()}


def limits_map(raw: object, where: str) -> tuple[tuple[str, Limit], ...]:
    """The operator's ``{knob = {default, max}}`` table over the shipped limits (a knob left out keeps them)."""
    if not isinstance(raw, Mapping):
        raise KnobError(f"'{where}' must be a table of {', '.join(KNOBS)}, each {{default, max}}, got {raw!r}")
    limits = dict(SHIPPED_LIMITS)
    for name, pair in raw.items():
        place = f"{where}.{name}"
        if name not in KNOBS:
            raise KnobError(f"'{where}': unknown enhancement '{name}' (known: {', '.join(KNOBS)})")
        if not isinstance(pair, Mapping) or set(pair) - {"default", "max"}:
            raise KnobError(f"'{place}' must be {{default, max}}, got {pair!r}")
        default = knob_value(name, pair.get("default", limits[name].default), f"{place}.default")
        ceiling = knob_value(name, pair.get("max", limits[name].max), f"{place}.max")
        if name in INTEGER_KNOBS and ceiling < 0:
            raise KnobError(f"'{place}.max' must not be negative, got {ceiling!r}")
        limits[name] = Limit(default, ceiling)
    return tuple((name, limits[name]) for name in KNOBS)


def clamp(name: str, raw: KnobValue, ceiling: KnobValue) -> KnobValue:
    """int → min(max(0, raw), max); bool → raw and max."""
    if name in INTEGER_KNOBS:
        return min(max(0, int(raw)), int(ceiling))
    return bool(raw) and bool(ceiling)


def resolve(limits: tuple[tuple[str, Limit], ...], client: Mapping[str, KnobValue],
            request: Mapping[str, KnobValue]) -> dict[str, Resolved]:
    """Each knob's value in force: the request's, else the client's, else the operator's default, clamped."""
    resolved = {}
    for name, limit in limits:
        if name in request:
            raw, source = request[name], "request"
        elif name in client:
            raw, source = client[name], "settings"
        else:
            raw, source = limit.default, "operator"
        resolved[name] = Resolved(name, clamp(name, raw, limit.max), source, raw, limit.max)
    return resolved
