"""Language-server latency: one-line edits in a 5,000-line file, questions right after an edit, and
ragLsp/context on a large workspace, each beside a baseline measured in the same run.

    .venv/bin/python bench/server_bench.py /work/benchtrees/perf/Django-5.1.4 \\
        --code base=/work/benchtrees/perf/base --code new=.

(see bench/index_bench.py for getting that tree and for ``--code``: every
measurement runs in a child process with that checkout's ``rag_lsp``, the
checkouts interleaved; the edit modes run ``--repeats`` times each, the
checkouts taking turns, and their samples are pooled).

1. edit: a one-line edit at a random line of a generated 5,000-line Python
   file until the index reflects it, through ``Session.change_document`` (what
   the server's didChange handler runs, minus JSON-RPC decoding), in wall-clock
   time and in the process's CPU time (which other processes on a loaded
   machine disturb less). Baseline: the same text indexed from scratch (full
   parse, every chunk re-indexed) in a second index of the same file, so that
   the timed edits find the records their own last edit left (as in a server,
   which never re-indexes an open buffer from scratch between keystrokes).
   classes: the same, in four of Django's files (under the workspace given)
   made mostly of one class each, where no window around the edit serves
   (``CLASS_FILES``; 100 edits each, pooled).
   typing: the same, for a statement typed a character at a time into a
   function's body at twelve random places (about half of the keystrokes
   leave a syntax error, as typing does; such a file once cost a full
   extraction on every keystroke); the run reports how many did.
2. edit-then-ask: through a real ``rag-lsp serve`` over stdio (real language
   servers switched off, as in ``served`` below), ``didChange``
   inserting a comment with a fresh word, then at once ``ragLsp/context`` for
   that word; the time from sending the change to the answer, and whether the
   answer's first place holds the new line.
3. context: ``ragLsp/context`` through a real ``rag-lsp serve`` on the given
   workspace after its initial indexing, from a real LSP client, with the
   real language servers switched off (``served``: rag_lsp's own latency) and
   as installed (``served-ls``: the venv's pyright starts, indexes the
   workspace beside rag_lsp and is asked within ``languageServerBudgetMs``);
   baseline: the same questions asked in-process. Then the server's resident
   memory (without the language servers' processes). The client keeps each
   answer as the JSON it receives, as an editor's client does (``plain_json``).
4. local-edit: the in-process questions again, each right after a one-line
   edit of the workspace's largest Python file, open as an editor buffer (the
   edit not timed): what a question pays for the index having just changed
   (tables and the code graph brought up to date). Its baseline is ``local``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lsp_harness import Harness

    from rag_lsp.workspace.documents import TextEdit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from latency import DJANGO_QUESTIONS, NO_LANGUAGE_SERVERS, median_p95, time_questions

ROUNDS = 200


def generated_module(functions: int = 1000) -> str:
    """About 5,000 lines of Python: functions with docstrings and bodies."""
    parts = []
    for i in range(functions):
        parts.append(f'def handler_{i}(request, value):\n    """Handle case {i}."""\n'
                     f"    total = value * {i} + len(request)\n    return total\n")
    return "\n".join(parts)


def edit_latency(tmp: Path, rounds: int = ROUNDS) -> dict:
    """One-line insertions at random lines, each timed until indexed, beside the baseline."""
    from rag_lsp.workspace.documents import TextEdit

    rng = random.Random(7)
    lines = generated_module().count("\n")
    edits = (TextEdit(line, 0, line, 0, f"# edit {version}\n")
             for version, line in enumerate((rng.randrange(0, lines) for _ in range(rounds)), 2))
    return _timed_edits(tmp, edits)


# Typed one character at a time as a new first line of a function's body: about half of its prefixes
# (``value =``, ``value = compute(request, [1,``) are not valid Python.
TYPED = "value = compute(request, [1, 2])"
TYPING_PLACES = 12


def typing_latency(tmp: Path) -> dict:
    """A statement typed a character at a time into each of ``TYPING_PLACES`` random functions, each keystroke
    timed until indexed, beside the baseline; also how many of the keystrokes left the file with a syntax
    error."""
    from rag_lsp.workspace.documents import TextEdit

    rng = random.Random(7)
    functions = [number for number, line in enumerate(generated_module().split("\n")) if line.startswith("def ")]

    def edits() -> Iterator[TextEdit]:
        # Places are chosen in the generated text and typed from the last one up, so that each place's line
        # number still holds when it is reached.
        for line in sorted(rng.sample(functions, TYPING_PLACES), reverse=True):
            yield TextEdit(line + 1, 0, line + 1, 0, "    \n")
            for column, character in enumerate(TYPED, 4):
                yield TextEdit(line + 1, column, line + 1, column, character)

    return _timed_edits(tmp, edits())


# Real files made mostly of one class each (``QuerySet`` is 1,733 of ``query.py``'s 2,732 lines), under the
# workspace given: no window serves an edit inside such a class (``index/parsing/narrowing.py``).
CLASS_FILES = ("django/db/models/query.py", "django/db/models/base.py", "django/forms/models.py",
               "django/test/testcases.py")


def class_latency(tmp: Path, root: Path, rounds: int = ROUNDS // 2) -> dict:
    """One-line comments inserted at random lines of each of ``CLASS_FILES``, each timed until indexed, beside
    the baseline; the samples of the files pooled."""
    from rag_lsp.workspace.documents import TextEdit

    pooled: dict = {}
    for number, name in enumerate(CLASS_FILES):
        text = (root / name).read_text(encoding="utf-8")
        rng = random.Random(7)
        lines = text.count("\n")
        edits = (TextEdit(line, 0, line, 0, f"# edit {version}\n")
                 for version, line in enumerate((rng.randrange(0, lines) for _ in range(rounds)), 2))
        _pool(pooled, "classes", _timed_edits(tmp / f"classes-{number}", edits, text))
    return pooled["classes"]


def _timed_edits(tmp: Path, edits: Iterable[TextEdit], text: str | None = None) -> dict:
    """Each edit through ``Session.change_document`` into an open module (``text``, by default the generated
    one), timed until indexed (wall clock and process CPU), and the same text indexed from scratch in a second
    index (the baseline)."""
    from rag_lsp.index.root_index import Index
    from rag_lsp.workspace.session import Session

    root = tmp / "edit"
    root.mkdir(parents=True)
    path = root / "big.py"
    text = generated_module() if text is None else text
    path.write_text(text)
    session = Session(use_cache=False)
    session.add_root(root)
    session.index_roots()
    session.open_document(path, text, 1)
    incremental, incremental_cpu, full = [], [], []
    with_errors = 0
    baseline = Index(root, use_cache=False)
    baseline.refresh()
    for version, edit in enumerate(edits, 2):
        began, began_cpu = time.perf_counter(), time.process_time()
        session.change_document(path, version, [edit])
        incremental.append((time.perf_counter() - began) * 1000)
        incremental_cpu.append((time.process_time() - began_cpu) * 1000)
        document = session.documents[path]
        # The last parse's nodes say whether the file holds an error (after a window the document's own tree
        # is not re-parsed); older checkouts only kept the tree.
        errors = getattr(document.nodes, "has_error", None)
        with_errors += errors if errors is not None else document.tree is not None and document.tree.root_node.has_error
        began = time.perf_counter()
        baseline.set_file("big.py", document.text)
        full.append((time.perf_counter() - began) * 1000)
    return {"incremental": incremental, "incremental_cpu": incremental_cpu, "full": full,
            "lines": session.documents[path].text.count("\n"), "with_errors": with_errors,
            "edits": len(incremental)}


def plain_json(harness: Harness) -> Harness:
    """The harness with its client keeping a response's result as the JSON it is, as an editor's client does.
    pygls's client makes every object of a result into a namedtuple of a class made for it, about 4 ms for one
    context answer of 24 KB, which these timings counted as the server's until 2026-12-04."""
    from pygls.protocol import JsonRPCResponseMessage

    harness.client.protocol._converter.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**obj))
    return harness


async def edit_then_ask(tmp: Path, rounds: int = 100) -> dict:
    from lsp_harness import Harness
    from lsprotocol import types

    root = tmp / "ask"
    root.mkdir()
    path = root / "big.py"
    text = generated_module()
    path.write_text(text)
    harness = plain_json(Harness(tmp / "ask-cache", tmp / "ask.log"))
    await harness.start([root], NO_LANGUAGE_SERVERS)
    await harness.wait_indexed(timeout=600)
    uri = harness.open(path, text)
    await harness.request("ragLsp/context", {"query": "handler request value"}, timeout=60)
    rng = random.Random(11)
    latencies, seen = [], 0
    for version in range(2, rounds + 2):
        line = rng.randrange(0, text.count("\n"))
        word = f"keystroke{version}marker"
        began = time.perf_counter()
        harness.change(uri, version, [types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, 0), types.Position(line, 0)), text=f"# {word}\n")])
        answer = await harness.request("ragLsp/context", {"query": word, "topK": 1}, timeout=60)
        latencies.append((time.perf_counter() - began) * 1000)
        items = (answer.get("items") or []) if isinstance(answer, dict) else []
        seen += bool(items) and word in items[0].get("content", "")
    await harness.stop()
    return {"latencies": latencies, "seen": seen, "rounds": rounds}


def in_process_context(root: Path, repeats: int, after_edit: bool = False) -> list[float]:
    """The questions asked in-process on ``root`` after its indexing and a first answer; with ``after_edit``,
    each right after a one-line edit of an open buffer (the edit itself not timed), as an editor asks when its
    user has typed: what a question pays for the index having changed."""
    from rag_lsp.features.context import answer_context
    from rag_lsp.retrieval.answer import ContextRequest
    from rag_lsp.workspace.documents import TextEdit
    from rag_lsp.workspace.session import Session

    session = Session(use_cache=True, cache_root=Path(tempfile.mkdtemp()))
    session.add_root(root)
    session.index_roots()
    answer_context(session, ContextRequest(DJANGO_QUESTIONS[0]))
    if not after_edit:
        return time_questions(lambda query: answer_context(session, ContextRequest(query)), repeats)
    path = max(sorted(root.rglob("*.py")), key=lambda p: p.stat().st_size)
    text = path.read_text(encoding="utf-8")
    session.open_document(path, text, 1)
    rng = random.Random(11)
    asked = []
    for version, query in enumerate(DJANGO_QUESTIONS * repeats, start=2):
        line = rng.randrange(0, text.count("\n"))
        session.change_document(path, version, [TextEdit(line, 0, line, 0, f"# edit {version}\n")])
        began = time.perf_counter()
        answer_context(session, ContextRequest(query))
        asked.append((time.perf_counter() - began) * 1000)
    return asked


async def served_context(root: Path, tmp: Path, repeats: int, language_servers: bool) -> dict:
    from lsp_harness import Harness

    harness = plain_json(Harness(tmp / "cache", tmp / "server.log"))
    began = time.perf_counter()
    await harness.start([root], None if language_servers else NO_LANGUAGE_SERVERS)
    await harness.wait_indexed(timeout=1800)
    indexing = time.perf_counter() - began
    await harness.request("ragLsp/context", {"query": DJANGO_QUESTIONS[0]}, timeout=120)
    latencies = []
    for _ in range(repeats):
        for query in DJANGO_QUESTIONS:
            began = time.perf_counter()
            await harness.request("ragLsp/context", {"query": query}, timeout=60)
            latencies.append((time.perf_counter() - began) * 1000)
    status = await harness.request("ragLsp/status", None)
    assert isinstance(status, dict)
    pid = harness.client._server.pid
    rss = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
               if line.startswith("VmRSS")) / 1024
    await harness.stop()
    return {"latencies": latencies, "indexing_s": indexing, "rss_mb": rss, "files": status["files"]}


def child(mode: str, root: str, repeats: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "edit":
            return edit_latency(Path(tmp))
        if mode == "typing":
            return typing_latency(Path(tmp))
        if mode == "classes":
            return class_latency(Path(tmp), Path(root))
        if mode == "ask":
            return asyncio.run(edit_then_ask(Path(tmp)))
        if mode in ("served", "served-ls"):
            return asyncio.run(served_context(Path(root), Path(tmp), repeats, mode == "served-ls"))
        return {"latencies": in_process_context(Path(root), repeats, after_edit=mode == "local-edit")}


def measure(mode: str, root: Path, repeats: int, code: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code))
    out = subprocess.run([sys.executable, __file__, "--child", mode, str(root), str(repeats)], env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError(f"{mode} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _pool(found: dict[str, dict], mode: str, result: dict) -> None:
    """Add one run's samples (lists) and counts (``seen``, ``rounds``) to what earlier runs of the mode gave."""
    if mode not in found:
        found[mode] = result
        return
    for key, value in result.items():
        if isinstance(value, list) or key in ("seen", "rounds", "with_errors", "edits"):
            found[mode][key] += value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, nargs="?", help="a workspace of over 1,000 files")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--code", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--modes", default="edit,typing,classes,ask,served,served-ls,local,local-edit")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", nargs=3, metavar=("MODE", "ROOT", "REPEATS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], int(args.child[2]))))
        return
    codes = dict(item.split("=", 1) for item in args.code) or {"this": str(Path(__file__).resolve().parents[1])}
    modes = args.modes.split(",")
    results: dict[str, dict[str, dict]] = {label: {} for label in codes}
    loads = []
    for mode in modes:
        # The edit modes run once per repeat, the checkouts taking turns, and pool their samples: on a shared
        # machine the load then falls on each checkout alike. The others repeat their questions inside one run.
        for _ in range(args.repeats if mode in ("edit", "typing", "classes", "ask") else 1):
            for label, code in codes.items():
                loads.append(os.getloadavg()[0])
                _pool(results[label], mode, measure(mode, args.root, args.repeats, Path(code).resolve()))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}, load average {min(loads):.1f}–{max(loads):.1f}; "
          "median / p95 ms")
    print("| code | one-line edit until indexed | baseline: full re-parse and re-index | edit then question "
          "(served), answer shows the edit | ragLsp/context served | served, language servers as installed "
          "| baseline: in-process | in-process, right after a one-line edit | server RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, found in results.items():
        cells = [label]
        edit, ask = found.get("edit"), found.get("ask")
        served, local = found.get("served"), found.get("local")
        cells += [median_p95(edit["incremental"]), median_p95(edit["full"])] if edit else ["", ""]
        cells.append(f"{median_p95(ask['latencies'])}, {ask['seen']}/{ask['rounds']}" if ask else "")
        cells.append(median_p95(served["latencies"]) if served else "")
        cells.append(median_p95(found["served-ls"]["latencies"]) if "served-ls" in found else "")
        cells.append(median_p95(local["latencies"]) if local else "")
        cells.append(median_p95(found["local-edit"]["latencies"]) if "local-edit" in found else "")
        cells.append(f"{served['rss_mb']:.0f}" if served else "")
        print("| " + " | ".join(cells) + " |")
    for label, found in results.items():
        if "edit" in found:
            print(f"- {label}: one-line edit until indexed, CPU time of the process "
                  f"{median_p95(found['edit']['incremental_cpu'])}")
        if "classes" in found:
            classes = found["classes"]
            print(f"- {label}: one-line edit inside Django's big classes until indexed {median_p95(classes['incremental'])} "
                  f"(CPU time {median_p95(classes['incremental_cpu'])}; baseline, a full re-parse and re-index, "
                  f"{median_p95(classes['full'])}); {classes['with_errors']} of {classes['edits']} edits left a "
                  "syntax error")
        if "typing" in found:
            typing = found["typing"]
            print(f"- {label}: typing a statement, each keystroke until indexed {median_p95(typing['incremental'])} "
                  f"(CPU time {median_p95(typing['incremental_cpu'])}; baseline, a full re-parse and re-index, "
                  f"{median_p95(typing['full'])}); {typing['with_errors']} of {typing['edits']} keystrokes left a "
                  "syntax error")
    for label, found in results.items():
        if "served" in found:
            print(f"- {label}: {found['served']['files']} files, initial indexing {found['served']['indexing_s']:.1f} s")


if __name__ == "__main__":
    main()
