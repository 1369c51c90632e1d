"""Cold and warm indexing of a real mid-size repository, with an I/O baseline in the same run.

The repository is a pinned release sdist anyone can fetch the same way:

    .venv/bin/pip download --no-deps --no-binary :all: django==5.1.4 -d /tmp/rag-bench
    tar xzf /tmp/rag-bench/Django-5.1.4.tar.gz -C /tmp/rag-bench
    .venv/bin/python bench/index_bench.py /tmp/rag-bench/Django-5.1.4

Each measurement runs in a fresh process so peak RSS is that of the run alone:
- baseline: walk the tree and read every candidate file (the I/O floor);
- cold: index with an empty cache directory;
- warm: index again from that cache (nothing changed);
- touch: one file changed, the rest from the cache.
Then query latency (median, p95) of ``retrieve`` on the warm index.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import DJANGO_QUESTIONS, median_p95


def child(mode: str, root: str, cache: str) -> dict:
    """One measurement, run inside a fresh interpreter."""
    started = time.perf_counter()
    if mode == "baseline":
        from rag_lsp.index.walk import WalkStats, load, walk

        stats = WalkStats()
        count = sum(1 for f in walk([root], stats) if load(f, stats=stats).text is not None)
        result = {"files": count}
    else:
        from rag_lsp.index.root_index import Index
        from rag_lsp.retrieval.answer import ContextRequest
        from rag_lsp.retrieval.retrieve import retrieve

        index = Index(root, cache_root=Path(cache))
        stats = index.refresh()
        result = {"files": stats.files, "chunks": stats.chunks, "parsed": stats.parsed, "reused": stats.reused}
        if mode == "warm":
            latencies = []
            for _ in range(5):
                for query in DJANGO_QUESTIONS:
                    began = time.perf_counter()
                    retrieve(index, ContextRequest(query))
                    latencies.append((time.perf_counter() - began) * 1000)
            result["query_ms"] = latencies
    result["seconds"] = time.perf_counter() - started
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["peak_rss_children_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return result


def measure(mode: str, root: Path, cache: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", mode, str(root), str(cache)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, nargs="?")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "ROOT", "CACHE"), help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    with tempfile.TemporaryDirectory() as cache:
        cache_path = Path(cache)
        rows = {"baseline": measure("baseline", args.root, cache_path)}
        rows["cold"] = measure("cold", args.root, cache_path)
        rows["warm"] = measure("warm", args.root, cache_path)
        victim = next(p for p in sorted(args.root.rglob("*.py")) if p.stat().st_size > 2000)
        original = victim.read_bytes()
        try:
            victim.write_bytes(original + b"\n# touched by the benchmark\n")
            rows["touch"] = measure("touch", args.root, cache_path)
        finally:
            victim.write_bytes(original)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}; root: {args.root}")
    print("| run | files | chunks | parsed | from cache | seconds | files/s | peak RSS MB (main / workers) |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, row in rows.items():
        print(f"| {mode} | {row['files']} | {row.get('chunks', '')} | {row.get('parsed', '')} | "
              f"{row.get('reused', '')} | {row['seconds']:.2f} | {row['files'] / row['seconds']:.0f} | "
              f"{row['peak_rss_mb']:.0f} / {row['peak_rss_children_mb']:.0f} |")
    latencies = rows["warm"]["query_ms"]
    print(f"\nquery latency on the warm index ({len(latencies)} queries, indexing excluded), "
          f"median / p95 ms: {median_p95(latencies)}")


if __name__ == "__main__":
    main()
