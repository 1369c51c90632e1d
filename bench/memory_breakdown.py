"""Where a warm server's memory goes, stage by stage: after imports, after loading the index from its
snapshot, after building the lookup tables and the code graph, and after answering questions.

Each stage reports the resident set (``VmRSS``) split into anonymous memory (Python's objects, arrays built in
memory) and file-backed pages (the memory-mapped snapshot's pages that were read: shared page cache that the
kernel can drop, but counted in RSS). With ``--trace`` a second run in a fresh process lists the Python
allocations still alive at the end by the module that made them (tracemalloc makes that run slower and
larger, so its RSS is not reported).

    .venv/bin/python bench/memory_breakdown.py /work/benchtrees/perf/Django-5.1.4 --cache-dir /tmp/cache [--trace]

The cache directory is filled by the first run (a cold index, not measured) and read by the measured runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from latency import DJANGO_QUESTIONS

TOP_MODULES = 12


def _rss() -> dict[str, int]:
    """VmRSS, RssAnon and RssFile of this process, in MB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {name: int(fields[key].split()[0]) // 1024
            for name, key in (("rss", "VmRSS"), ("anon", "RssAnon"), ("file", "RssFile"))}


def child(root: Path, cache: Path, trace: bool) -> dict:
    if trace:
        tracemalloc.start(1)
    stages = {"started": _rss()}
    from rag_lsp.features.context import answer_context
    from rag_lsp.retrieval.answer import ContextRequest
    from rag_lsp.workspace.session import Session

    stages["imported"] = _rss()
    session = Session(use_cache=True, cache_root=cache)
    session.add_root(root)
    session.index_roots()
    stages["index loaded"] = _rss()
    session.prepare_answers()
    stages["tables and graph built"] = _rss()
    for question in DJANGO_QUESTIONS:
        answer_context(session, ContextRequest(question))
    stages[f"{len(DJANGO_QUESTIONS)} questions answered"] = _rss()
    result: dict = {"stages": stages}
    if trace:
        stats = tracemalloc.take_snapshot().statistics("filename")
        repository = str(Path(__file__).resolve().parents[1]) + "/"
        result["traced_mb"] = sum(stat.size for stat in stats) / 2**20
        result["modules"] = [(stat.traceback[0].filename.replace(repository, ""), stat.size / 2**20)
                             for stat in stats[:TOP_MODULES]]
    return result


def measure(root: Path, cache: Path, trace: bool) -> dict:
    out = subprocess.run([sys.executable, __file__, str(root), "--cache-dir", str(cache), "--child"]
                         + (["--trace"] if trace else []), capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--trace", action="store_true", help="also list the live Python allocations by module")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.root, args.cache_dir, args.trace)))
        return
    measure(args.root, args.cache_dir, False)  # Fills the cache; a cold index is not what this measures.
    result = measure(args.root, args.cache_dir, False)
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {args.root}")
    print("| stage | RSS MB | anonymous MB | file-backed MB |")
    print("|---|---|---|---|")
    for stage, rss in result["stages"].items():
        print(f"| {stage} | {rss['rss']} | {rss['anon']} | {rss['file']} |")
    if args.trace:
        traced = measure(args.root, args.cache_dir, True)
        print(f"\nLive Python allocations at the end, {traced['traced_mb']:.0f} MB traced, by module:\n")
        print("| module | MB |")
        print("|---|---|")
        for module, size in traced["modules"]:
            print(f"| {module} | {size:.1f} |")


if __name__ == "__main__":
    main()
