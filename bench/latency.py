"""What the timing benchmarks share, importing nothing of rag_lsp: a child process may run another checkout's
``rag_lsp`` (``--code LABEL=DIR`` in index_bench.py and server_bench.py), which must not meet this one's.

The sample questions about Django (the pinned sdist the indexing and server benchmarks use), the loop that times
them, the options that keep real language servers out of a served run, and nearest-rank percentile arithmetic.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

DJANGO_QUESTIONS = [
    "why does QuerySet.filter raise FieldError for a missing field",
    "where is the CSRF token checked",
    "`get_object_or_404` returns 404",
    "migration autodetector renames a model",
    "template engine caches loaders",
    "How are password hashers configured",
    "timezone aware datetime conversion in the ORM",
    "ModelForm clean validation error messages",
]


# Initialization options that switch every real language server off, for served runs that measure rag_lsp alone:
# a real server (pyright, clangd) indexing the workspace adds its own CPU and up to languageServerBudgetMs to
# every question.
NO_LANGUAGE_SERVERS = {"languageServers": {name: {"enabled": False} for name in (
    "python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "ruby")}}


def time_questions(ask: Callable[[str], object], repeats: int) -> list[float]:
    """Milliseconds of each of ``repeats`` rounds of DJANGO_QUESTIONS asked through ``ask``, in order."""
    latencies = []
    for _ in range(repeats):
        for query in DJANGO_QUESTIONS:
            began = time.perf_counter()
            ask(query)
            latencies.append((time.perf_counter() - began) * 1000)
    return latencies


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile (``fraction`` in 0..1) of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def median_p95(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} / {percentile(values, 0.95):.2f}"
