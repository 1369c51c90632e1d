"""Cold and warm indexing of a real repository, each beside its floors and a baseline build, in one run.

The repository is a pinned release sdist anyone can fetch the same way (kept outside the repository):

    .venv/bin/pip download --no-deps --no-binary :all: django==5.1.4 -d /work/benchtrees/perf
    tar xzf /work/benchtrees/perf/Django-5.1.4.tar.gz -C /work/benchtrees/perf
    .venv/bin/python bench/index_bench.py /work/benchtrees/perf/Django-5.1.4 \\
        --code base=/work/benchtrees/perf/base --code new=. --repeats 3

``--code LABEL=DIR`` runs the measurements with the ``rag_lsp`` package of DIR
(a checkout, e.g. ``git archive main | tar -x -C DIR``), so the code before a
change and after it are measured in the same run, interleaved repeat by
repeat, on this shared and noisy machine. Each measurement runs in a fresh
process with its own empty or filled cache directory:

- floor-read: walk the tree and read every candidate file (the I/O floor of a cold index);
- floor-stat: walk the tree and stat every candidate (the floor of a warm start);
- cold: index with an empty cache, then answer one question;
- warm: start again from that cache (nothing changed) and answer one question; the headline number is
  process start to first answer, measured by the parent from before it starts the process;
- touch: one file changed, the rest from the cache, then one question;
- queries: on the warm index, 8 questions × 5 after the first answer; reported together and split into each
  question's first asking (the first round but its first question, asked once before: what a new question
  costs, its chunks not yet built) and the repeats.

``--answer-mode`` is the mode every answer is asked in: ``task`` (the default of ``ragLsp/context``: the ranked
places and the bundle the task's template gathers around them, callers, tests and summaries) or ``ranked``
(the ranked places alone, as the quality benchmarks ask: the ranking stack of issue 12).

``--modes cold,warm`` measures only those (warm and touch need cold's cache,
so cold runs whenever they do). ``--bytecode`` measures each code as an
installed package runs: its modules compiled to bytecode once, into a private
``PYTHONPYCACHEPREFIX`` (not into the checkout), before the measurements.
Without it, whether a process compiles ``rag_lsp`` from source depends on the
environment (``PYTHONDONTWRITEBYTECODE``) and on a checkout's leftover
``__pycache__``; compiling cost the import phase about 0.2 s on Django.

Seconds are wall-clock; CPU is the process's own plus its workers' (user + system). Peak RSS is sampled
every 10 ms as the sum over the process and every descendant (its parse workers), and reported beside the
kernel's peak of the main process alone.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from latency import DJANGO_QUESTIONS, median_p95

MODES = ("floor-read", "floor-stat", "cold", "warm", "touch")


def child(mode: str, root: str, cache: str, answer_mode: str) -> dict:
    """One measurement, run inside a fresh interpreter."""
    started = time.perf_counter()
    if mode.startswith("floor"):
        from rag_lsp.index.walk import WalkStats, load, walk

        stats = WalkStats()
        if mode == "floor-read":
            count = sum(1 for f in walk([root], stats) if load(f, stats=stats).text is not None)
        else:
            count = sum(1 for f in walk([root], stats) if os.stat(Path(root) / f.path).st_size >= 0)
        result: dict = {"files": count}
    else:
        from rag_lsp.gc_pause import tune_for_answers
        from rag_lsp.index.root_index import Index
        from rag_lsp.retrieval.answer import ContextRequest
        from rag_lsp.retrieval.retrieve import retrieve

        # The collector as every process that answers has it: the server, the command line and the MCP server
        # each make a Session, which tunes it first thing (``gc_pause.py``).
        tune_for_answers()
        imported = time.perf_counter()
        index = Index(root, cache_root=Path(cache))
        stats = index.refresh()
        indexed = time.perf_counter()
        retrieve(index, ContextRequest(DJANGO_QUESTIONS[0], mode=answer_mode))
        result = {"files": stats.files, "chunks": stats.chunks, "parsed": stats.parsed, "reused": stats.reused,
                  "answered_at": time.time(), "index_s": indexed - imported, "first_s": time.perf_counter() - indexed}
        if mode == "warm":
            latencies = []
            for _ in range(5):
                for query in DJANGO_QUESTIONS:
                    began = time.perf_counter()
                    retrieve(index, ContextRequest(query, mode=answer_mode))
                    latencies.append((time.perf_counter() - began) * 1000)
            result["query_ms"] = latencies
    result["seconds"] = time.perf_counter() - started
    own = resource.getrusage(resource.RUSAGE_SELF)
    result["cpu_s"] = own.ru_utime + own.ru_stime
    result["peak_rss_main_mb"] = own.ru_maxrss / 1024
    return result


TICK = os.sysconf("SC_CLK_TCK")


def sample_tree(pid: int, cpu: dict[int, float]) -> float:
    """Resident memory of a process and all its descendants in MB; records each one's CPU seconds in ``cpu``.

    Parse workers are children of a fork server, not of the measured process,
    so neither ``RUSAGE_CHILDREN`` nor the kernel's peak RSS sees them.
    """
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += int(status.split("VmRSS:")[1].split()[0]) if "VmRSS:" in status else 0
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            cpu[current] = max(cpu.get(current, 0.0), (int(fields[11]) + int(fields[12])) / TICK)
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError, IndexError):
            continue
    return total / 1024


def child_env(code: Path, bytecode: Path | None) -> dict[str, str]:
    """The environment of a measured process: ``code``'s rag_lsp, and its bytecode cache when there is one."""
    env = dict(os.environ, PYTHONPATH=str(code))
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    return env


def compiled(codes: dict[str, str], scratch: Path, enabled: bool) -> dict[str, Path | None]:
    """Each code's private bytecode cache under ``scratch`` (None for each when not ``enabled``), filled with
    what a warm start imports; a cold run compiles the rest (parsing) as it goes."""
    bytecode = {label: scratch / label if enabled else None for label in codes}
    for label, code in codes.items():
        if bytecode[label] is not None:
            subprocess.run([sys.executable, "-c", "import rag_lsp.index.root_index, rag_lsp.retrieval.retrieve"],
                           env=child_env(Path(code).resolve(), bytecode[label]), check=True)
    return bytecode


def interleaved(codes: dict[str, str], repeats: int, bytecode: bool,
                measure_one: Callable[[Path, Path | None], dict]) -> tuple[dict[str, list[dict]], list[float]]:
    """Each code's ``repeats`` measurements by ``measure_one(code, its bytecode cache)``, the codes taking
    turns (the load of a shared machine then falls on each alike), and the load average before each."""
    runs: dict[str, list[dict]] = {label: [] for label in codes}
    loads = []
    with tempfile.TemporaryDirectory() as scratch:
        caches = compiled(codes, Path(scratch), bytecode)
        for _ in range(repeats):
            for label, code in codes.items():
                loads.append(os.getloadavg()[0])
                runs[label].append(measure_one(Path(code).resolve(), caches[label]))
    return runs, loads


def measure(mode: str, root: Path, cache: Path, code: Path, bytecode: Path | None = None,
            answer_mode: str = "task") -> dict:
    env = child_env(code, bytecode)
    began = time.time()
    process = subprocess.Popen([sys.executable, __file__, "--child", mode, str(root), str(cache), answer_mode],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = 0.0
    cpu: dict[int, float] = {}
    while process.poll() is None:
        peak = max(peak, sample_tree(process.pid, cpu))
        time.sleep(0.01)
    out, err = process.communicate()
    if process.returncode:
        raise RuntimeError(f"{mode} failed:\n{err}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_tree_mb"] = max(peak, result["peak_rss_main_mb"])
    # The main process's own figure is exact; its descendants' are the last samples.
    result["cpu_s"] = result["cpu_s"] + sum(value for key, value in cpu.items() if key != process.pid)
    if "answered_at" in result:
        result["start_to_answer_s"] = result["answered_at"] - began
        # Starting the interpreter and importing: what the process did before it began indexing.
        result["import_s"] = result["start_to_answer_s"] - result["index_s"] - result["first_s"]
    return result


def run_once(root: Path, code: Path, modes: list[str], bytecode: Path | None, answer_mode: str) -> dict[str, dict]:
    with tempfile.TemporaryDirectory() as cache:
        cache_path = Path(cache)
        rows = {mode: measure(mode, root, cache_path, code, bytecode, answer_mode) for mode in MODES[:4]
                if mode in modes}
        if "touch" not in modes:
            return rows
        victim = next(p for p in sorted(root.rglob("*.py")) if p.stat().st_size > 2000 and ".git" not in p.parts)
        original, stamp = victim.read_bytes(), victim.stat()
        try:
            victim.write_bytes(original + b"\n# touched by the benchmark\n")
            rows["touch"] = measure("touch", root, cache_path, code, bytecode, answer_mode)
        finally:
            victim.write_bytes(original)
            os.utime(victim, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    return rows


def spread(values: list[float], digits: int = 2) -> str:
    """Median and range of repeated measurements."""
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, nargs="?")
    parser.add_argument("--code", action="append", default=[], metavar="LABEL=DIR",
                        help="a checkout whose rag_lsp to measure (repeatable); default: this one")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--modes", default=",".join(MODES), help="the measurements to run, comma-separated")
    parser.add_argument("--bytecode", action="store_true",
                        help="compile each code to bytecode once (a private cache) before measuring it")
    parser.add_argument("--answer-mode", choices=("task", "ranked"), default="task",
                        help="the mode every answer is asked in (default: task, as ragLsp/context)")
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    parser.add_argument("--child", nargs=4, metavar=("MODE", "ROOT", "CACHE", "ANSWER_MODE"), help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    codes = dict(item.split("=", 1) for item in args.code) or {"this": str(Path(__file__).resolve().parents[1])}
    asked = set(args.modes.split(","))
    modes = [mode for mode in MODES if mode in asked or (mode == "cold" and asked & {"warm", "touch"})]
    runs, loads = interleaved(codes, args.repeats, args.bytecode,
                              lambda code, bytecode: run_once(args.root, code, modes, bytecode, args.answer_mode))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}; root: {args.root}; {args.repeats} repeat(s), "
          f"{'bytecode compiled once' if args.bytecode else 'bytecode as the environment has it'}, "
          f"answers in {args.answer_mode} mode, "
          f"load average {min(loads):.1f}–{max(loads):.1f}; median (min–max)")
    print("| code | run | files | chunks | parsed | from cache | seconds | CPU s | start to first answer s "
          "| peak RSS MB, with workers / main |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, repeats in runs.items():
        for mode in modes:
            rows = [repeat[mode] for repeat in repeats]
            first = rows[0]
            answer = spread([r["start_to_answer_s"] for r in rows]) if "start_to_answer_s" in first else ""
            print(f"| {label} | {mode} | {first['files']} | {first.get('chunks', '')} | {first.get('parsed', '')} | "
                  f"{first.get('reused', '')} | {spread([r['seconds'] for r in rows])} | "
                  f"{spread([r['cpu_s'] for r in rows])} | {answer} | "
                  f"{spread([r['peak_rss_tree_mb'] for r in rows], 0)} / {spread([r['peak_rss_main_mb'] for r in rows], 0)} |")
    if "warm" not in modes:
        return
    print("\nwarm start phases (s): import / index / first answer; queries after the first on the warm index (ms)")
    for label, repeats in runs.items():
        warm = [repeat["warm"] for repeat in repeats]
        phases = " / ".join(spread([w[key] for w in warm]) for key in ("import_s", "index_s", "first_s"))
        latencies = [value for w in warm for value in w["query_ms"]]
        # The first question was asked once before (the first answer), so its first round is a repeat.
        asked = len(DJANGO_QUESTIONS)
        first = [value for w in warm for value in w["query_ms"][1:asked]]
        again = [value for w in warm for value in w["query_ms"][:1] + w["query_ms"][asked:]]
        print(f"- {label}: {phases}; {len(latencies)} queries, median / p95 {median_p95(latencies)}; "
              f"first asking {median_p95(first)}, repeated {median_p95(again)}")


if __name__ == "__main__":
    main()
