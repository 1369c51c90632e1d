"""Questions asked while a cold index runs, beside a baseline code in the same run.

A user opens a large workspace and asks at once: the answer comes from what is indexed so far, and the
question holds the index's lock while it is answered, so indexing waits meanwhile. Each measurement is a
fresh process with an empty cache that indexes ``ROOT`` in a thread (``Index.refresh``, as the server's
initial indexing) and, from the main thread, asks bench/latency.py's DJANGO_QUESTIONS in turn, one every
``--interval`` seconds, until the refresh ends. Each question takes the index's lock first and answers while
holding it, so its time splits into the wait for the lock (the indexer installing a batch or writing a
snapshot) and its own work (what indexing waits for). Reported per code: the questions' work and wait
(median, p95, max over all repeats), how far indexing was at the last question, and the refresh's wall time
with the questions.

    .venv/bin/python bench/during_bench.py /work/benchtrees/perf/Django-5.1.4 \\
        --code base=/work/benchtrees/perf/base --code new=. --repeats 3 --bytecode

(``--code`` and ``--bytecode`` as in bench/index_bench.py.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from index_bench import child_env, interleaved, spread
from latency import DJANGO_QUESTIONS, median_p95


def child(root: str, cache: str, interval: float) -> dict:
    """One measurement, run inside a fresh interpreter."""
    from rag_lsp.index.root_index import Index
    from rag_lsp.retrieval.answer import ContextRequest
    from rag_lsp.retrieval.retrieve import retrieve

    index = Index(root, cache_root=Path(cache))
    done = threading.Event()
    progress = [0, 0]

    def run() -> None:
        try:
            index.refresh(progress=lambda finished, total: progress.__setitem__(slice(0, 2), [finished, total]))
        finally:
            done.set()

    began = time.perf_counter()
    indexer = threading.Thread(target=run)
    indexer.start()
    questions = []
    while not done.wait(interval):
        asked = time.perf_counter()
        with index.lock:
            locked = time.perf_counter()
            retrieve(index, ContextRequest(DJANGO_QUESTIONS[len(questions) % len(DJANGO_QUESTIONS)]))
            answered = time.perf_counter()
        questions.append({"at_s": asked - began, "done": progress[0], "total": progress[1],
                          "wait_ms": (locked - asked) * 1000, "work_ms": (answered - locked) * 1000})
    indexer.join()
    return {"index_s": time.perf_counter() - began, "files": len(index.files), "questions": questions}


def measure(root: Path, code: Path, interval: float, bytecode: Path | None) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        process = subprocess.run([sys.executable, __file__, "--child", str(root), cache, str(interval)],
                                 check=False, capture_output=True, text=True, env=child_env(code, bytecode))
    if process.returncode:
        raise RuntimeError(f"measurement failed:\n{process.stderr}")
    return json.loads(process.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, nargs="?")
    parser.add_argument("--code", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between an answer and the next question")
    parser.add_argument("--bytecode", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("ROOT", "CACHE", "INTERVAL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        root, cache, interval = args.child
        print(json.dumps(child(root, cache, float(interval))))
        return
    codes = dict(item.split("=", 1) for item in args.code) or {"this": str(Path(__file__).resolve().parents[1])}
    runs, loads = interleaved(codes, args.repeats, args.bytecode,
                              lambda code, bytecode: measure(args.root, code, args.interval, bytecode))
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {os.cpu_count()} cores; root: {args.root}; {args.repeats} "
          f"repeat(s), a question every {args.interval:g} s; load average {min(loads):.1f}–{max(loads):.1f}")
    print("| code | questions | work ms: median / p95 (max) | wait for the lock ms: median / p95 (max) "
          "| indexed at the last question | refresh s with the questions, median (min–max) |")
    print("|---|---|---|---|---|---|")
    for label, repeats in runs.items():
        asked = [q for run in repeats for q in run["questions"]]
        work, wait = [q["work_ms"] for q in asked], [q["wait_ms"] for q in asked]
        last = [f"{run['questions'][-1]['done']}/{run['questions'][-1]['total']}" for run in repeats if run["questions"]]
        print(f"| {label} | {len(asked)} | {median_p95(work)} ({max(work, default=0):.0f}) | "
              f"{median_p95(wait)} ({max(wait, default=0):.0f}) | {', '.join(last)} | "
              f"{spread([run['index_s'] for run in repeats])} |")


if __name__ == "__main__":
    main()
