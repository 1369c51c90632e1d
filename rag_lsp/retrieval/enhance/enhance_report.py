"""What an answer says about its enhancements: the retrieval mode, each root's vectors, each knob's cost.

Frozen records, like the rest of the answer; ``server/wire.py`` makes the
documented JSON of them (``retrieval`` in docs/protocol.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_lsp.index.vectors.embedding import VectorStatus
from rag_lsp.retrieval.enhance.knobs import KnobValue


@dataclass(frozen=True, slots=True)
class KnobReport:
    """One knob: its value in force and where it came from, how it ran and what it cost, and why it did less
    than its value asked (``degraded``) when it did."""

    name: str
    value: KnobValue
    requested: KnobValue
    source: str
    max: KnobValue
    # ``prf`` (pseudo-relevance feedback), ``llm``, ``signals``, ``signals+llm``, or ``off``.
    method: str
    variants: int = 0
    passes: int = 0
    model_calls: int = 0
    # Milliseconds this knob's own work took (model calls, the extra list passes); None when it is part of the
    # ranking and not measured apart (the signal rerank).
    ms: float | None = 0.0
    degraded: str | None = None


@dataclass(frozen=True, slots=True)
class DenseRoot:
    """The dense side of one root for this question: whether its vectors were used, and why not."""

    root: str
    used: bool
    reason: str | None
    status: VectorStatus | None


@dataclass(frozen=True, slots=True)
class RetrievalReport:
    """``hybrid-rrf`` or ``hybrid-weighted`` when vectors took part, ``exact`` for a quoted question, else
    ``lexical``; ``reason`` says why the configured mode did not run as configured."""

    mode: str
    reason: str | None
    roots: tuple[DenseRoot, ...]
    knobs: tuple[KnobReport, ...]
    # Embedding the question and searching the vectors, all roots together.
    dense_ms: float = 0.0
