"""Indexing, warm start, questions, edits and memory at about 1,000, 10,000 and 100,000 files (issue 15).

The workspaces are built from real files, outside the repository, by this script:

    .venv/bin/python bench/scale_bench.py build --out /work/benchtrees/scale
    .venv/bin/python bench/scale_bench.py run --out /work/benchtrees/scale --size 1k --size 10k \\
        --json /work/benchtrees/scale/results.json
    .venv/bin/python bench/scale_bench.py run --out /work/benchtrees/scale --size 100k \\
        --modes floor-read,cold,warm,served,budget --json /work/benchtrees/scale/results.json
    .venv/bin/python bench/scale_bench.py table --json /work/benchtrees/scale/results.json \\
        --plot docs/images/scaling.png

- ``ws-1k``: every fifth file that the index admits from Django 5.1.4's sdist (the tree of
  bench/index_bench.py), in path order, plus ``django/db/models/query.py`` (the file the edits go to), under
  ``copy-00/Django-5.1.4/``;
- ``ws-10k``: two whole copies of that sdist, ``copy-00/`` and ``copy-01/``;
- ``ws-100k``: sixteen copies (``copy-00/`` … ``copy-15/``) and, under ``mixed/``, one copy of every tree of
  /work/benchtrees/semble-mine and /work/benchtrees/localize-mine (27 repositories whose main languages are
  19, from C# to Zig: the development sets' checkouts), so that a sixth of it is not Django.

Copies keep their modification times; their paths differ, so each is a different file to the index. Every
measurement runs in a fresh child process with this checkout's ``rag_lsp`` (``PYTHONPATH`` is set to it) and
its own cache directory under ``--out``; the sizes and modes run one after another, never in parallel:

- floor-read: walk the workspace and read every candidate file (the I/O floor of a cold index);
- cold: index with an empty cache (``Session.index_roots``), then answer one question; the cache's size
  on disk afterwards;
- warm: start again from that cache and answer one question (process start to first answer, measured by the
  parent from before it starts the process), then ``Session.prepare_answers`` (what the server does once its
  indexing is done; what the first answer built already is not built again), then DJANGO_QUESTIONS ×
  ``--repeats`` through ``answer_context`` (as bench/server_bench.py's in-process baseline), then one-line edits of
  ``copy-00/Django-5.1.4/django/db/models/query.py`` through ``Session.change_document`` until indexed (as
  bench/server_bench.py's edit measurement);
- served: a real ``rag-lsp serve`` (tests/e2e/lsp_harness.py) with an empty cache and ``firstIndexWaitMs`` 0.
  While the initial indexing runs it asks, in rounds that take at most a fifth of the time, a question (recording the answer's ``indexing``), a
  one-line ``didChange`` of the open ``query.py`` followed by ``ragLsp/status`` (a query runs after every
  edit received before it is indexed, so this is the edit until indexed plus a status) and a status alone;
  ``$/progress`` reports are stamped as they arrive. After indexing: the same edits, the questions, and
  edit-then-ask (a fresh word typed, then asked for: is it in the first place?). The server's process tree
  is sampled for its peak resident memory;
- budget: the same server started twice more with an index budget below the workspace (``maxIndexFiles``
  a fifth of it, then ``maxIndexSeconds`` 60), recording what the status and an answer say.

A child that runs longer than ``--timeout`` or whose process tree exceeds ``--max-rss-mb`` is stopped, and
the row records how far it got (the last progress it reported) instead of a number it did not reach.
Peak RSS is sampled every 20 ms as the sum over the process and its descendants (the parse workers are
children of a fork server), beside the kernel's peak of the main process alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

import itertools

from index_bench import sample_tree
from latency import DJANGO_QUESTIONS, NO_LANGUAGE_SERVERS, median_p95, percentile, time_questions

CODE = Path(__file__).resolve().parents[1]
DJANGO = Path("/work/benchtrees/perf/Django-5.1.4")
MIXED = (Path("/work/benchtrees/semble-mine"), Path("/work/benchtrees/localize-mine"))
EDIT_TARGET = "copy-00/Django-5.1.4/django/db/models/query.py"
SIZES = ("1k", "10k", "100k")
MODES = ("floor-read", "cold", "warm", "served", "budget")
# Every fifth admitted Django file makes the 1k workspace; copies of the whole tree the larger ones.
SUBSET_STRIDE = 5
COPIES = {"10k": 2, "100k": 16}
EDITS = 50
# Between two rounds of questions and edits while the server indexes: at least this long, and four times what
# the round took, so that the questions take at most a fifth of the server's time and indexing the rest.
DURING_PAUSE_S = 2.0


# Building the workspaces (not measured).

def build(out: Path, sizes: list[str]) -> None:
    """Write the workspaces of ``sizes`` under ``out`` (each skipped if it is there already)."""
    for size in sizes:
        workspace = out / f"ws-{size}"
        if workspace.exists():
            print(f"{workspace}: exists, kept")
            continue
        partial = out / f"ws-{size}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        if size == "1k":
            build_subset(partial / "copy-00" / DJANGO.name)
        else:
            for copy in range(COPIES[size]):
                shutil.copytree(DJANGO, partial / f"copy-{copy:02d}" / DJANGO.name, symlinks=True)
            if size == "100k":
                for parent in MIXED:
                    for tree in sorted(p for p in parent.iterdir() if p.is_dir()):
                        shutil.copytree(tree, partial / "mixed" / tree.name, symlinks=True)
        partial.rename(workspace)
        print(f"{workspace}: built")


def build_subset(target: Path) -> None:
    """Every ``SUBSET_STRIDE``-th file the index admits from Django, plus the edit target."""
    from rag_lsp.index.walk import WalkStats, load, walk

    stats = WalkStats()
    admitted = [f.path for f in walk([DJANGO], stats) if load(f, stats=stats).text is not None]
    chosen = set(admitted[::SUBSET_STRIDE]) | {EDIT_TARGET.split("/", 2)[2]}
    for rel in sorted(chosen):
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(DJANGO / rel, target / rel)


# The measurements, each in a fresh child process.

def note(**progress: object) -> None:
    """How far a child got, on stderr: the parent keeps the last line if it has to stop the child."""
    print(json.dumps(progress), file=sys.stderr, flush=True)


def rss_main_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_floor(root: Path) -> dict:
    from rag_lsp.index.walk import WalkStats, load, walk

    stats = WalkStats()
    files = size = 0
    for walked in walk([root], stats):
        text = load(walked, stats=stats).text
        if text is not None:
            files += 1
            size += walked.size
    return {"files": files, "bytes": size}


def child_index(mode: str, root: Path, cache: Path, repeats: int) -> dict:
    """cold or warm: index (from the cache when warm), answer one question; warm also times questions and edits."""
    from rag_lsp.features.context import answer_context
    from rag_lsp.retrieval.answer import ContextRequest
    from rag_lsp.workspace.session import Session

    imported = time.perf_counter()
    session = Session(cache_root=cache)
    session.add_root(root)
    began = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if done % 2048 < 128 or done == total:
            note(done=done, total=total, seconds=round(time.perf_counter() - began, 1),
                 rss_main_mb=round(rss_main_mb()))

    (stats,) = session.index_roots(progress=progress)
    indexed = time.perf_counter()
    result: dict = {"files": stats.files, "chunks": stats.chunks, "parsed": stats.parsed, "reused": stats.reused,
                    "index_s": indexed - imported, "rss_indexed_mb": rss_main_mb()}
    answer_context(session, ContextRequest(DJANGO_QUESTIONS[0]))
    result.update(answered_at=time.time(), first_s=time.perf_counter() - indexed, rss_first_answer_mb=rss_main_mb())
    if mode == "warm":
        # What the server does once its indexing is done, before the questions it then answers.
        prepared = time.perf_counter()
        session.prepare_answers()
        result["prepare_s"] = time.perf_counter() - prepared
        result["query_ms"] = time_questions(lambda query: answer_context(session, ContextRequest(query)), repeats)
        result["rss_queries_mb"] = rss_main_mb()
        result["edit_ms"] = edit_latency(session, root / EDIT_TARGET)
    return result


def edit_latency(session, path: Path, rounds: int = EDITS) -> list[float]:
    """One-line edits at random lines of an open file until indexed (``Session.change_document``)."""
    from rag_lsp.workspace.documents import TextEdit

    text = path.read_text(encoding="utf-8")
    session.open_document(path, text, 1)
    rng = random.Random(7)
    lines = text.count("\n")
    latencies = []
    for version in range(2, rounds + 2):
        line = rng.randrange(0, lines)
        started = time.perf_counter()
        session.change_document(path, version, [TextEdit(line, 0, line, 0, f"# edit {version}\n")])
        latencies.append((time.perf_counter() - started) * 1000)
        lines += 1
    return latencies


class Stamped(list):
    """The harness's $/progress recorder, with the arrival time of each value."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, value: object) -> None:
        self.times.append(time.perf_counter())
        super().append(value)


def field(value: object, name: str, default: Any = None) -> Any:
    """A field of a decoded response (pygls gives custom responses as objects, progress values as dicts)."""
    return value.get(name, default) if isinstance(value, dict) else getattr(value, name, default)


async def sample_peak(pid: int, peak: list[float]) -> None:
    cpu: dict[int, float] = {}
    while True:
        peak[0] = max(peak[0], sample_tree(pid, cpu))
        await asyncio.sleep(0.05)


async def one_edit(harness, uri: str, version: int, line: int, word: str) -> float:
    """``didChange`` inserting a comment line, then ``ragLsp/status``: ms until the edit is indexed (plus a status)."""
    from lsprotocol import types

    started = time.perf_counter()
    harness.change(uri, version, [types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(line, 0), types.Position(line, 0)), text=f"# {word}\n")])
    await harness.request("ragLsp/status", None, timeout=600)
    return (time.perf_counter() - started) * 1000


async def timed(harness, method: str, params: object) -> tuple[float, object]:
    started = time.perf_counter()
    answer = await harness.request(method, params, timeout=900)
    return (time.perf_counter() - started) * 1000, answer


def long_requests() -> None:
    """Let a request wait up to 15 minutes: the harness's 60 s deadline is for tests on small trees, and a
    question asked while 100,000 files are being indexed took longer than that."""
    import lsp_harness

    lsp_harness.REQUEST_TIMEOUT = 900.0


async def served(root: Path, tmp: Path, repeats: int, timeout: float) -> dict:
    """The real server: progress, questions and edits while it indexes, then after."""
    from lsp_harness import Harness

    long_requests()
    harness = Harness(tmp / "cache", tmp / "server.log")
    stamped = harness.progress = Stamped()
    peak = [0.0]
    target = root / EDIT_TARGET
    text = target.read_text(encoding="utf-8")
    lines = text.count("\n")
    rng = random.Random(11)
    began = time.perf_counter()
    # Stop early enough to return what was measured before the parent stops this process.
    deadline = began + timeout - 60
    await harness.start([root], {"firstIndexWaitMs": 0, **NO_LANGUAGE_SERVERS})
    sampler = asyncio.ensure_future(sample_peak(harness.client._server.pid, peak))
    uri = harness.open(target, text)
    version = 1
    during: list[dict] = []
    try:
        while "end" not in harness.progress_kinds() and time.perf_counter() < deadline:
            query = DJANGO_QUESTIONS[len(during) % len(DJANGO_QUESTIONS)]
            at = time.perf_counter() - began
            question_ms, answer = await timed(harness, "ragLsp/context", {"query": query})
            indexing = field(answer, "indexing")
            version += 1
            edit_ms = await one_edit(harness, uri, version, rng.randrange(0, lines), f"during{version}word")
            lines += 1
            status_ms, status = await timed(harness, "ragLsp/status", None)
            state = field(status, "indexing")
            during.append({"at_s": at, "question_ms": question_ms, "places": len(field(answer, "items", []) or []),
                           "done": field(indexing, "done") if indexing else None,
                           "total": field(indexing, "total") if indexing else None,
                           "warnings": list(field(answer, "warnings", []) or []),
                           "edit_ms": edit_ms, "status_ms": status_ms,
                           "status_done": field(state, "done"), "status_total": field(state, "total")})
            note(phase="during", **{k: v for k, v in during[-1].items() if k != "warnings"})
            # The pause ends early when indexing ends or the deadline comes.
            resume = time.perf_counter() + max(DURING_PAUSE_S, 4 * (time.perf_counter() - began - at))
            while time.perf_counter() < min(resume, deadline) and "end" not in harness.progress_kinds():
                await asyncio.sleep(0.1)
        indexed = "end" in harness.progress_kinds()
        if not indexed and time.perf_counter() < deadline:
            try:
                await harness.wait_indexed(timeout=deadline - time.perf_counter())
                indexed = True
            except TimeoutError:
                pass
        indexing_s = stamped.times[harness.progress_kinds().index("end")] - began if indexed else None
        note(phase="indexed" if indexed else "not indexed by the deadline", seconds=indexing_s)
        # After indexing, each loop stops at the deadline (``cut``), so that what was measured is returned.
        after_edits, after_status, questions, asks, seen, cut = [], [], [], [], 0, not indexed
        for _ in range(EDITS if indexed else 0):
            if cut := time.perf_counter() > deadline:
                break
            version += 1
            after_edits.append(await one_edit(harness, uri, version, rng.randrange(0, lines), f"after{version}word"))
            lines += 1
            after_status.append((await timed(harness, "ragLsp/status", None))[0])
        if not cut:
            await harness.request("ragLsp/context", {"query": DJANGO_QUESTIONS[0]}, timeout=900)
        for query in [q for _ in range(repeats) for q in DJANGO_QUESTIONS] if not cut else []:
            if cut := time.perf_counter() > deadline:
                break
            questions.append((await timed(harness, "ragLsp/context", {"query": query}))[0])
        for _ in range(20 if not cut else 0):
            if cut := time.perf_counter() > deadline:
                break
            version += 1
            word = f"keystroke{version}marker"
            started = time.perf_counter()
            await one_edit(harness, uri, version, rng.randrange(0, lines), word)
            lines += 1
            answer = await harness.request("ragLsp/context", {"query": word, "topK": 1}, timeout=900)
            asks.append((time.perf_counter() - started) * 1000)
            items = field(answer, "items", []) or []
            seen += bool(items) and word in (field(items[0], "content", "") or "")
        status = await harness.request("ragLsp/status", None, timeout=600)
    finally:
        sampler.cancel()
        await harness.stop()
    kinds = harness.progress_kinds()
    reports = [t for t, kind in zip(stamped.times, kinds, strict=True) if kind == "report"]
    marks = [t for t, kind in zip(stamped.times, kinds, strict=True) if kind in ("begin", "report", "end")]
    state = field(status, "indexing")
    return {"files": field(status, "files"), "chunks": field(status, "chunks"), "indexing_s": indexing_s,
            "indexed": indexed, "cut": cut, "state": [field(state, "done"), field(state, "total")],
            "progress_reports": len(reports), "progress_gaps_s": [b - a for a, b in itertools.pairwise(marks)],
            "during": during, "edit_ms": after_edits, "status_ms": after_status, "question_ms": questions,
            "ask_ms": asks, "ask_seen": seen, "peak_rss_tree_mb": peak[0],
            "language_servers": [str(field(server, "state")) for server in field(status, "language_servers", []) or []]}


async def budgeted(root: Path, tmp: Path, options: dict, timeout: float) -> dict:
    """The server with an index budget: how long, how much, and what the status and an answer say."""
    from lsp_harness import Harness

    long_requests()
    harness = Harness(tmp / "cache", tmp / "server.log")
    began = time.perf_counter()
    await harness.start([root], {"firstIndexWaitMs": 0, **NO_LANGUAGE_SERVERS, **options})
    try:
        await harness.wait_indexed(timeout=timeout)
        indexing_s = time.perf_counter() - began
        status = await harness.request("ragLsp/status", None, timeout=600)
        answer = await harness.request("ragLsp/context", {"query": DJANGO_QUESTIONS[0]}, timeout=900)
    finally:
        await harness.stop()
    roots = field(status, "roots", []) or []
    return {"options": options, "indexing_s": indexing_s, "files": field(status, "files"),
            "truncated": [field(r, "truncated") for r in roots],
            "status_warnings": [w for r in roots for w in (field(r, "warnings", []) or [])],
            "answer_warnings": list(field(answer, "warnings", []) or []),
            "answer_indexing": bool(field(answer, "indexing")), "answer_truncated": field(answer, "truncated")}


def child(mode: str, root: str, cache: str, repeats: int, timeout: float) -> dict[str, Any]:
    result: dict[str, Any]
    started = time.perf_counter()
    if mode == "floor-read":
        result = child_floor(Path(root))
    elif mode in ("cold", "warm"):
        result = child_index(mode, Path(root), Path(cache), repeats)
    elif mode == "served":
        result = asyncio.run(served(Path(root), Path(cache), repeats, timeout))
    else:
        runs = []
        for options in ({"maxIndexFiles": budget_files(Path(root))}, {"maxIndexSeconds": 60}):
            shutil.rmtree(Path(cache) / "cache", ignore_errors=True)
            runs.append(asyncio.run(budgeted(Path(root), Path(cache), options, timeout)))
            note(phase="budget", **runs[-1])
        result = {"runs": runs}
    result["seconds"] = time.perf_counter() - started
    own = resource.getrusage(resource.RUSAGE_SELF)
    result["cpu_s"] = own.ru_utime + own.ru_stime
    result["peak_rss_main_mb"] = own.ru_maxrss / 1024
    return result


def budget_files(root: Path) -> int:
    """A fifth of the workspace's files (counted without reading them)."""
    return max(1, sum(len(files) for _, _, files in os.walk(root)) // 5)


def disk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure(mode: str, root: Path, cache: Path, repeats: int, timeout: float, max_rss_mb: float) -> dict:
    """Run one mode in a fresh process, sampling its tree's memory; stop it at the time or memory limit."""
    env = dict(os.environ, PYTHONPATH=str(CODE))
    began = time.time()
    with tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(
            [sys.executable, __file__, "--child", mode, str(root), str(cache), str(repeats), str(timeout)],
            stdout=subprocess.PIPE, stderr=err, text=True, env=env, start_new_session=True)
        peak, cpu, stopped = 0.0, {}, None
        while process.poll() is None:
            peak = max(peak, sample_tree(process.pid, cpu))
            elapsed = time.time() - began
            if elapsed > timeout + 120 or peak > max_rss_mb:
                stopped = f"stopped after {elapsed:.0f} s, process tree at {peak:.0f} MB"
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                break
            time.sleep(0.02)
        out = process.stdout.read() if process.stdout else ""
        err.seek(0)
        log = err.read()
    notes = [line for line in log.splitlines() if line.startswith("{")]
    if stopped or process.returncode:
        return {"failed": stopped or f"exit code {process.returncode}: {log[-2000:]}",
                "last_progress": json.loads(notes[-1]) if notes else None, "peak_rss_tree_mb": peak,
                "wall_s": time.time() - began}
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_tree_mb"] = max(peak, result.get("peak_rss_tree_mb", 0.0), result["peak_rss_main_mb"])
    result["cpu_s"] += sum(value for key, value in cpu.items() if key != process.pid)
    if "answered_at" in result:
        result["start_to_answer_s"] = result["answered_at"] - began
    if mode in ("cold", "warm"):
        result["cache_bytes"] = disk_bytes(cache)
    return result


def run(out: Path, sizes: list[str], modes: list[str], repeats: int, timeout: float, max_rss_mb: float,
        results_path: Path | None) -> dict:
    results = json.loads(results_path.read_text()) if results_path and results_path.exists() else {}
    for size in sizes:
        root = out / f"ws-{size}"
        if not root.is_dir():
            raise SystemExit(f"{root} is missing: run `build` first")
        index_cache = out / "cache" / size
        for mode in modes:
            if mode == "cold":
                shutil.rmtree(index_cache, ignore_errors=True)
            cache = index_cache if mode in ("cold", "warm") else Path(tempfile.mkdtemp(dir=out))
            cache.mkdir(parents=True, exist_ok=True)
            load = os.getloadavg()[0]
            print(f"{time.strftime('%H:%M:%S')} {size} {mode} (load {load:.1f})", flush=True)
            row = measure(mode, root, cache, repeats, timeout, max_rss_mb)
            row.update(load_before=load, measured_at=time.strftime("%Y-%m-%d %H:%M %Z"))
            if cache != index_cache:
                shutil.rmtree(cache, ignore_errors=True)
            results.setdefault(size, {})[mode] = row
            if results_path:
                results_path.write_text(json.dumps(results, indent=1))
    return results


# Reporting.

def p50_p95(values: list[float]) -> str:
    return median_p95(values) if values else "—"


def gb(mb: float) -> str:
    return f"{mb / 1024:.2f}"


def table(results: dict) -> str:
    """The Markdown tables of docs/scaling.md."""
    lines = [("| workspace | files | chunks | read floor s | cold index s (CPU s) | cold peak RSS GB, with workers / main "
             "| cache on disk MB | warm start s (start to first answer) | warm RSS GB at first answer / after "
             "questions | question ms p50 / p95 | edit until indexed ms p50 / p95 |"),
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for size in SIZES:
        found = results.get(size)
        if not found:
            continue
        floor, cold, warm = found.get("floor-read", {}), found.get("cold", {}), found.get("warm", {})

        def cell(row: dict, text: str) -> str:
            return f"not measured: {row['failed']}" if "failed" in row else text if row else "—"

        lines.append(" | ".join([
            f"| {size}", str(cold.get("files", floor.get("files", "—"))), str(cold.get("chunks", "—")),
            cell(floor, f"{floor.get('seconds', 0):.1f}"),
            cell(cold, f"{cold.get('index_s', 0):.1f} ({cold.get('cpu_s', 0):.0f})"),
            cell(cold, f"{gb(cold.get('peak_rss_tree_mb', 0))} / {gb(cold.get('rss_indexed_mb', 0))}"),
            cell(cold, f"{cold.get('cache_bytes', 0) / 2**20:.0f}"),
            cell(warm, f"{warm.get('start_to_answer_s', 0):.1f}"),
            cell(warm, f"{gb(warm.get('rss_first_answer_mb', 0))} / {gb(warm.get('rss_queries_mb', 0))}"),
            cell(warm, p50_p95(warm.get("query_ms", []))),
            cell(warm, p50_p95(warm.get("edit_ms", []))),
        ]) + " |")
    served_rows = [(size, results[size]["served"]) for size in SIZES if "served" in results.get(size, {})]
    if served_rows:
        lines += ["", ("| workspace | server indexing s | server peak RSS GB | $/progress reports, gap s p50 / p95 / max "
                  "| during indexing: questions, ms p50 / p95, share indexed at answer | during indexing: edit "
                  "until indexed ms p50 / p95 (status alone) | after: edit until indexed ms p50 / p95 (status alone) "
                  "| after: question ms p50 / p95 | after: edit then ask ms p50 / p95, word first |"),
                  "|---|---|---|---|---|---|---|---|---|"]
        for size, row in served_rows:
            if "failed" in row:
                lines.append(f"| {size} | not measured: {row['failed']} (last: {row.get('last_progress')}) "
                             "| | | | | | | |")
                continue
            during = row["during"]
            gaps = row["progress_gaps_s"]
            shares = [d["done"] / d["total"] for d in during if d["done"] is not None and d["total"]]
            share = f"{min(shares):.0%}–{max(shares):.0%}" if shares else "—"
            lines.append(" | ".join([
                f"| {size}", f"{row['indexing_s']:.1f}" if row.get("indexing_s") is not None
                else f"not done by the deadline ({row['state'][0]} of {row['state'][1]})", gb(row["peak_rss_tree_mb"]),
                (f"{row['progress_reports']}, {statistics.median(gaps):.2f} / {percentile(gaps, 0.95):.2f} / "
                 f"{max(gaps):.2f}") if gaps else "—",
                f"{len(during)}, {p50_p95([d['question_ms'] for d in during])}, {share}",
                f"{p50_p95([d['edit_ms'] for d in during])} ({p50_p95([d['status_ms'] for d in during])})",
                f"{p50_p95(row['edit_ms'])} ({p50_p95(row['status_ms'])})",
                p50_p95(row["question_ms"]),
                f"{p50_p95(row['ask_ms'])}, {row['ask_seen']}/{len(row['ask_ms'])}",
            ]) + " |")
    for size in SIZES:
        budget = results.get(size, {}).get("budget")
        if not budget:
            continue
        if "failed" in budget:
            lines.append(f"\n{size} budgets: not measured: {budget['failed']}")
            continue
        lines.append("")
        for item in budget["runs"]:
            lines.append(f"- {size}, {item['options']}: {item['files']} files indexed in {item['indexing_s']:.1f} s; "
                         f"status truncated = {item['truncated']}; status warnings: {item['status_warnings']}; "
                         f"answer warnings: {item['answer_warnings']}")
    return "\n".join(lines)


def plot(results: dict, path: Path) -> None:
    """Each cost against the number of files, log-log."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    sizes = [s for s in SIZES if "cold" in results.get(s, {}) and "failed" not in results[s]["cold"]]
    files = [results[s]["cold"]["files"] for s in sizes]
    figure, (left, right) = pyplot.subplots(1, 2, figsize=(11, 4.2))
    series = [("cold index s", lambda r: r["cold"]["index_s"]),
              ("read floor s", lambda r: r["floor-read"]["seconds"] if "seconds" in r.get("floor-read", {}) else None),
              ("warm start s", lambda r: r["warm"].get("start_to_answer_s")),
              ("question p95 s", lambda r: percentile(r["warm"]["query_ms"], 0.95) / 1000 if r["warm"].get("query_ms")
               else None),
              ("edit until indexed p95 s", lambda r: percentile(r["warm"]["edit_ms"], 0.95) / 1000
               if r["warm"].get("edit_ms") else None)]
    for label, get in series:
        points = [(n, get(results[s])) for n, s in zip(files, sizes, strict=True) if "warm" in results[s]]
        points = [(n, v) for n, v in points if v is not None]
        left.plot([n for n, _ in points], [v for _, v in points], marker="o", label=label)
    left.set(xscale="log", yscale="log", xlabel="indexed files", ylabel="seconds", title="time")
    left.grid(True, which="both", alpha=0.3)
    left.legend()
    memory = [("cold peak RSS, with workers", lambda r: r["cold"]["peak_rss_tree_mb"]),
              ("warm RSS after questions", lambda r: r["warm"].get("rss_queries_mb")),
              ("cache on disk", lambda r: r["cold"]["cache_bytes"] / 2**20)]
    for label, get in memory:
        points = [(n, get(results[s])) for n, s in zip(files, sizes, strict=True) if "warm" in results[s]]
        points = [(n, v) for n, v in points if v is not None]
        right.plot([n for n, _ in points], [v / 1024 for _, v in points], marker="o", label=label)
    right.axhline(2.0, color="grey", linestyle="--", linewidth=1, label="goal: 2 GB")
    right.set(xscale="log", yscale="log", xlabel="indexed files", ylabel="GB", title="memory and disk")
    right.grid(True, which="both", alpha=0.3)
    right.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("command", nargs="?", choices=("build", "run", "table"))
    parser.add_argument("--out", type=Path, default=Path("/work/benchtrees/scale"),
                        help="where the workspaces and caches go (outside the repository)")
    parser.add_argument("--size", action="append", choices=SIZES, help="repeatable; default: all three")
    parser.add_argument("--modes", default="floor-read,cold,warm,served")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the eight questions")
    parser.add_argument("--timeout", type=float, default=1500, help="seconds one measurement may take")
    parser.add_argument("--max-rss-mb", type=float, default=16000)
    parser.add_argument("--json", type=Path, help="results, merged with what the file holds already")
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, root, cache, repeats, timeout = args.child
        print(json.dumps(child(mode, root, cache, int(repeats), float(timeout))))
        return
    if CODE in args.out.resolve().parents or args.out.resolve() == CODE:
        raise SystemExit("--out must be outside the repository")
    sizes: list[str] = args.size or list(SIZES)
    if args.command == "build":
        build(args.out, sizes)
        return
    if args.command == "run":
        results = run(args.out, sizes, args.modes.split(","), args.repeats, args.timeout, args.max_rss_mb, args.json)
    elif args.json and args.json.exists():
        results = json.loads(args.json.read_text())
    else:
        raise SystemExit("table needs --json with results")
    print(table(results))
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
