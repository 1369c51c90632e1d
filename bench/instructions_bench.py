"""Instructions a question costs on a warm index, counted by valgrind, for codes compared on a noisy machine.

This machine's timings swing by a third between identical runs (its neighbours, not ours), so a change that
saves a twentieth of a question cannot be seen in milliseconds, even in alternating runs. The number of
instructions a process executes hardly swings: valgrind's callgrind counts them, the same code's question
costs agreeing within 2% between runs (the rest of the spread is Python's collector and what a question
re-reads once a minute, the workspace's git state). Each code is measured three times from the same warm cache (a copy of it per run, so
that two runs never share a cache directory): the warm start and one warm-up question alone, then with each
of the eight Django questions of ``latency.py`` asked once (their first askings), then twice (their
repeats); the differences are what the questions cost. Runs go two at a time (one per core; a count does not
depend on the neighbour). Callgrind runs a process about fifty times slower: a code takes about five minutes.

    .venv/bin/python bench/instructions_bench.py /work/benchtrees/perf/Django-5.1.4 \\
        --code base=/work/benchtrees/perf/base --code new=. --answer-mode ranked

Needs valgrind (the Debian package). The cache of each code is filled first by an ordinary warm run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from latency import DJANGO_QUESTIONS

_COLLECTED = re.compile(r"Collected : (\d+)")
ROUNDS = (0, 1, 2)


def child(root: str, cache: str, answer_mode: str, rounds: int) -> None:
    """A warm start, a warm-up question, then ``rounds`` rounds of the questions (inside the counted process)."""
    from rag_lsp.gc_pause import tune_for_answers
    from rag_lsp.index.root_index import Index
    from rag_lsp.retrieval.answer import ContextRequest
    from rag_lsp.retrieval.retrieve import retrieve

    tune_for_answers()
    index = Index(Path(root), cache_root=Path(cache))
    index.refresh()
    retrieve(index, ContextRequest("warm up question about models", mode=answer_mode))
    for _ in range(rounds):
        for query in DJANGO_QUESTIONS:
            retrieve(index, ContextRequest(query, mode=answer_mode))


def counted(code: Path, root: Path, cache: Path, answer_mode: str, rounds: int, scratch: Path) -> int:
    """The instructions of one child process under callgrind, from its own copy of ``cache``."""
    own = Path(tempfile.mkdtemp(dir=scratch))
    shutil.copytree(cache, own / "cache")
    env = dict(os.environ, PYTHONPATH=str(code), PYTHONHASHSEED="0")
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={own / 'callgrind.out'}",
                           sys.executable, __file__, "--child", str(root), str(own / "cache"), answer_mode,
                           str(rounds)], env=env, capture_output=True, text=True, check=True)
    shutil.rmtree(own)
    return int(_COLLECTED.findall(done.stderr)[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("root", type=Path, nargs="?")
    parser.add_argument("--code", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--answer-mode", choices=("task", "ranked"), default="task")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        root, cache, answer_mode, rounds = args.child
        child(root, cache, answer_mode, int(rounds))
        return
    codes = {label: Path(code).resolve() for label, code in (item.split("=", 1) for item in args.code)}
    with tempfile.TemporaryDirectory() as temporary:
        scratch = Path(temporary)
        caches = {}
        for label, code in codes.items():
            caches[label] = scratch / f"cache-{label}"
            # One ordinary run fills the cache (a cold index the first time, a warm start after).
            subprocess.run([sys.executable, __file__, "--child", str(args.root), str(caches[label]), args.answer_mode,
                            "0"], env=dict(os.environ, PYTHONPATH=str(code)), check=True)
        jobs = [(label, rounds) for label in codes for rounds in ROUNDS]
        with ThreadPoolExecutor(max_workers=2) as pool:
            counts = dict(zip(jobs, pool.map(lambda job: counted(codes[job[0]], args.root, caches[job[0]],
                                                                 args.answer_mode, job[1], scratch), jobs)))
    questions = len(DJANGO_QUESTIONS)
    print(f"answers in {args.answer_mode} mode; {questions} questions; millions of instructions")
    print("| code | warm start and first answer | a first asking, mean | a repeat, mean |")
    print("|---|---|---|---|")
    for label in codes:
        start, once, twice = (counts[(label, rounds)] for rounds in ROUNDS)
        print(f"| {label} | {start / 1e6:,.0f} | {(once - start) / questions / 1e6:,.1f} | "
              f"{(twice - once) / questions / 1e6:,.1f} |")


if __name__ == "__main__":
    main()
