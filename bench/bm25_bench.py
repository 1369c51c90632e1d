"""Measure BM25Index against rank_bm25.BM25Okapi on a synthetic code-sized corpus.

At 100,000 chunks the index must answer an 8-term query in about 5 ms, absorb
a one-document edit in about 2 ms, and be built by ``add_many`` (a start from
the cache) in about 3 s; tests cannot check that, so this script does, and
puts the reference implementation's numbers beside ours so the comparison is
made on the same machine in the same run.

The corpus is seeded and Zipf-distributed like real code vocabulary: a few
terms are in most chunks, most terms are in a handful. Query terms are drawn
two ways: by corpus frequency (what people type, and the expensive case,
since common terms have long postings) and uniformly over the vocabulary.

Run: .venv/bin/python bench/bm25_bench.py [--docs 100000]
"""

from __future__ import annotations

import argparse
import datetime
import gc
import os
import platform
import statistics
import time
import tracemalloc
from collections import defaultdict
from importlib.metadata import version
from itertools import chain, count

import numpy as np
from rank_bm25 import BM25Okapi
from report import cpu_model

from rag_lsp.index.postings.bm25_index import BM25Index

QUERY_TERMS = 8
TOP_K = 10


def main() -> None:
    args = _parse_args()
    rng = np.random.default_rng(args.seed)
    sampler = ZipfSampler(rng, args.ranks, args.zipf)
    corpus = [sampler.document(args.min_len, args.max_len) for _ in range(args.docs)]
    vocabulary = sorted({term for doc in corpus for term in doc})
    frequent_queries = [sampler.terms(QUERY_TERMS) for _ in range(args.queries)]
    uniform_queries = [list(rng.choice(vocabulary, QUERY_TERMS)) for _ in range(args.queries)]

    checked_queries = frequent_queries[: args.checks] + uniform_queries[: args.checks]
    bulk, bulk_build_s = _timed(lambda: _build_many(corpus))
    _, numbering_s = _timed(lambda: _number_tokens(corpus))
    index, build_s = _timed(lambda: _build(corpus))
    reference, reference_build_s = _timed(lambda: BM25Okapi(corpus))
    max_error = _max_score_error(index, reference, checked_queries)
    bulk_error = _max_score_error(bulk, reference, checked_queries)
    bulk_differs = sum(bulk.top_k(q, TOP_K) != index.top_k(q, TOP_K) for q in frequent_queries + uniform_queries)
    del bulk
    bulk_final, bulk_peak = _traced_memory(lambda: _build_many(corpus))

    rows = [
        ("build with add() per document", _seconds(build_s), _seconds(reference_build_s)),
        ("build with add_many()", _seconds(bulk_build_s), _seconds(reference_build_s)),
        ("numbering the tokens alone, one dict lookup each (add_many's floor)", _seconds(numbering_s), ""),
        (
            "add_many(): index size / peak memory above it",
            f"{bulk_final / 2**20:.0f} MiB / {(bulk_peak - bulk_final) / 2**20:.0f} MiB",
            "",
        ),
        (
            "add_many() index vs add() index: top_k lists that differ",
            f"{bulk_differs} of {len(frequent_queries) + len(uniform_queries)}",
            "",
        ),
        ("vocabulary / postings", f"{len(vocabulary):,} terms / {sum(len(set(d)) for d in corpus):,}", ""),
    ]
    for label, queries in (("frequent", frequent_queries), ("uniform", uniform_queries)):
        top_k = _latencies(lambda q: index.top_k(q, TOP_K), queries)
        scores = _latencies(index.scores, queries)
        reference_scores = _latencies(reference.get_scores, queries[: args.reference_queries])
        rows.append((f"8-term query, {label} terms: top_k({TOP_K})", _spread(top_k), ""))
        rows.append((f"8-term query, {label} terms: all scores", _spread(scores), _spread(reference_scores)))
    replaces, queries_after_edit = _edit_latencies(index, sampler, rng, args)
    rows.append(("replace one document", _spread(replaces), "rebuild only"))
    rows.append((f"top_k({TOP_K}) right after a replace, frequent terms", _spread(queries_after_edit), ""))
    errors = f"{max_error:.2e} / {bulk_error:.2e}"
    rows.append(("max |score difference| on checked queries, add() / add_many()", errors, ""))

    _print_report(args, rows)


class ZipfSampler:
    """Draws term names whose frequencies follow a truncated Zipf law."""

    def __init__(self, rng: np.random.Generator, ranks: int, exponent: float) -> None:
        self.rng = rng
        weights = 1.0 / np.arange(1, ranks + 1) ** exponent
        self.cdf = np.cumsum(weights) / weights.sum()
        self.names = [f"t{rank}" for rank in range(ranks)]

    def terms(self, count: int) -> list[str]:
        """Return ``count`` terms drawn by frequency."""
        ranks = np.searchsorted(self.cdf, self.rng.random(count))
        ranks = np.minimum(ranks, len(self.names) - 1)
        return [self.names[rank] for rank in ranks.tolist()]

    def document(self, min_len: int, max_len: int) -> list[str]:
        """Return one chunk's tokens, its length uniform in ``[min_len, max_len]``."""
        return self.terms(int(self.rng.integers(min_len, max_len + 1)))


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--ranks", type=int, default=150_000, help="size of the Zipf support")
    parser.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent")
    parser.add_argument("--min-len", type=int, default=40)
    parser.add_argument("--max-len", type=int, default=200)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--reference-queries", type=int, default=20)
    parser.add_argument("--replaces", type=int, default=1000)
    parser.add_argument("--checks", type=int, default=5, help="queries of each kind compared with rank_bm25")
    return parser.parse_args()


def _build(corpus: list[list[str]]) -> BM25Index:
    """Index the corpus one document at a time, as the language server does."""
    index = BM25Index()
    for doc_id, tokens in enumerate(corpus):
        index.add(doc_id, tokens)
    return index


def _build_many(corpus: list[list[str]]) -> BM25Index:
    """Index the corpus in one call, as a start from the cache does."""
    index = BM25Index()
    index.add_many(enumerate(corpus))
    return index


def _number_tokens(corpus: list[list[str]], docs_per_batch: int = 30_000) -> list[np.ndarray]:
    """Number every token with one dict lookup, into numpy arrays: the least a Python build does.

    Batched like add_many's own pass, so that the comparison is fair.
    """
    numbering: defaultdict = defaultdict(count().__next__)
    batches = []
    for start in range(0, len(corpus), docs_per_batch):
        numbers = list(map(numbering.__getitem__, chain.from_iterable(corpus[start : start + docs_per_batch])))
        batches.append(np.fromiter(numbers, dtype=np.intc, count=len(numbers)))
    return batches


def _traced_memory(make) -> tuple[int, int]:
    """Return the bytes that what ``make()`` returns keeps, and the peak bytes while making it.

    tracemalloc sees Python's and numpy's allocations, which is all the
    index makes; it slows allocation down, so this run is not timed.
    """
    gc.collect()
    tracemalloc.start()
    try:
        result = make()
        final, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return final, peak


def _max_score_error(index: BM25Index, reference: BM25Okapi, queries: list[list[str]]) -> float:
    """Return the largest score difference between the two implementations."""
    worst = 0.0
    doc_ids = range(len(index))
    for query in queries:
        expected = reference.get_scores(query)
        ours = index.scores(query, doc_ids)
        got = np.array([ours[doc_id] for doc_id in doc_ids])
        worst = max(worst, float(np.max(np.abs(expected - got))))
    return worst


def _edit_latencies(index: BM25Index, sampler: ZipfSampler, rng: np.random.Generator, args) -> tuple[list, list]:
    """Time replaces of random documents, and queries that each follow one."""
    replaces = []
    queries_after_edit = []
    for i in range(args.replaces):
        doc_id = int(rng.integers(len(index)))
        tokens = sampler.document(args.min_len, args.max_len)
        start = time.perf_counter()
        index.replace(doc_id, tokens)
        replaces.append(time.perf_counter() - start)
        if i < args.queries:
            query = sampler.terms(QUERY_TERMS)
            start = time.perf_counter()
            index.top_k(query, TOP_K)
            queries_after_edit.append(time.perf_counter() - start)
    return replaces, queries_after_edit


def _timed(make):
    """Return what ``make()`` returns and the wall and CPU seconds it took, with a clean heap to start.

    The CPU time shows how much of the wall time other processes took on a
    shared machine.
    """
    gc.collect()
    start = time.perf_counter()
    cpu_start = time.process_time()
    result = make()
    return result, (time.perf_counter() - start, time.process_time() - cpu_start)


def _latencies(run, queries: list[list[str]]) -> list[float]:
    """Return the seconds each query took."""
    times = []
    for query in queries:
        start = time.perf_counter()
        run(query)
        times.append(time.perf_counter() - start)
    return times


def _spread(times: list[float]) -> str:
    """Format the median and 95th percentile of a list of durations in ms."""
    median = statistics.median(times) * 1e3
    p95 = float(np.percentile(times, 95)) * 1e3
    return f"{median:.2f} ms / {p95:.2f} ms (n={len(times)})"


def _seconds(wall_and_cpu: tuple[float, float]) -> str:
    """Format a wall-clock duration and the CPU time within it."""
    wall, cpu = wall_and_cpu
    return f"{wall:.2f} s (CPU {cpu:.2f} s)"


def _print_report(args: argparse.Namespace, rows: list[tuple[str, str, str]]) -> None:
    """Print the machine facts and a Markdown table of the results."""
    print(f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}")
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"- CPU: {cpu_model()}, {os.cpu_count()} logical cores, load average {load} at the end")
    print(f"- Python {platform.python_version()}, numpy {np.__version__}, rank_bm25 {version('rank-bm25')}")
    print(
        f"- corpus: {args.docs:,} docs, length {args.min_len}-{args.max_len} tokens, "
        f"Zipf exponent {args.zipf} over {args.ranks:,} ranks, seed {args.seed}"
    )
    print()
    print("| measure (median / p95) | BM25Index | rank_bm25 BM25Okapi |")
    print("|---|---|---|")
    for name, ours, reference in rows:
        print(f"| {name} | {ours} | {reference} |")


if __name__ == "__main__":
    main()
