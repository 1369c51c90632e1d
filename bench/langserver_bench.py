"""Measure what composing real language servers with the patterns costs and changes (issue 5).

Two measurements, each side by side with patterns only in the same run:

1. Localisation on ``/work/shared/bench/dev-localize.jsonl`` (the trees that
   ``bench/localize_bench.py`` writes): the fused ranker with the tree-sitter
   patterns only, against the same ranker whose symbol provider also asks a
   warm Python language server (pyright by default, whatever
   ``plan_servers`` picks). acc@1/5/10, MRR, and per-question latency.
2. The cost of composition per retrieval on the polyglot fixture
   (``tests/fixtures/polyglot``: Python, TypeScript, Go, Rust) with warm
   pyright and typescript-language-server, against patterns only.

Both also time each question asked a second time on unchanged text, the way
the session asks it: with the index's version, so that the server answers of
the first asking are remembered (a repeated or follow-up question, a code
lens resolved again). Every other timing passes no version: the servers are
asked every time.

"Warm" means the server was started and asked once before timing (its
project loaded), which is the editor's steady state; the first question
after a start is answered by the patterns (the server is "starting") and is
not timed. Each timed question is asked through a fresh
``CompositeSymbolProvider`` with the product defaults (1.5 s per call, 4
calls and 500 ms of server time per question).

Run: .venv/bin/python bench/langserver_bench.py [--repos-dir /tmp/rag-bench] [--cases N]
     (PATH must reach pyright-langserver and typescript-language-server:
     ``PATH=$PWD/tools/langservers/node_modules/.bin:$PWD/.venv/bin:$PATH``)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from latency import percentile
from localize_bench import DEFAULT_CASES, MRR_DEPTH, RANK_LIMIT, _gold_rank, _tree

from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import IndexSymbolProvider
from rag_lsp.index.tables import workspace_tables
from rag_lsp.langservers.composite import CompositeSymbolProvider
from rag_lsp.langservers.pool import ServerPool
from rag_lsp.retrieval.fusion import FusionRanker
from rag_lsp.retrieval.query import parse_query
from rag_lsp.server import wire
from rag_lsp.workspace.settings import Settings

POLYGLOT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "polyglot"
POLYGLOT_QUESTIONS = [
    "why does `RateLimiter.allow` let every request through",
    "rename `RateLimiter` to `Throttle`",
    "which classes implement `Limiter`?",
    "where is the token bucket refilled",
    "`FixedWindow` resets too early",
    "who calls `allow`",
]
# How long a server may take to start and load its project before the timed questions.
WARM_UP_SECONDS = 120.0
REPEATS = 5


def main() -> None:
    args = _parse_args()
    print(f"Language-server composition — {time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs.\n")
    _polyglot_cost()
    if not args.skip_localize:
        _localisation(args)


def _provider(index: Index, pool: ServerPool | None, remember: bool) -> CompositeSymbolProvider:
    """A question's provider with the product defaults (a fresh one per question, as the session does)."""
    defaults = Settings()
    return CompositeSymbolProvider(IndexSymbolProvider(index, workspace_tables(index)), pool,
                                   lambda rel: _read(index.root / rel),
                                   timeout=defaults.language_server_timeout_ms / 1000,
                                   max_calls=defaults.language_server_calls,
                                   budget=defaults.language_server_budget_ms / 1000,
                                   deadline=time.monotonic() + 3.0,
                                   version=index.version if remember else None)


def _read(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _rank(index: Index, text: str, pool: ServerPool | None, remember: bool = False
          ) -> tuple[list[str], float, list[dict]]:
    provider = _provider(index, pool, remember) if pool else None
    ranker = FusionRanker(provider=provider)
    started = time.perf_counter()
    ranking = ranker.rank(index, parse_query(text), RANK_LIMIT)
    candidates = ranking.candidates
    elapsed = (time.perf_counter() - started) * 1000
    files = list(dict.fromkeys(index.chunks[c.chunk_id].path for c in candidates))
    return files, elapsed, [wire.server_note_json(note) for note in ranking.report.language_servers]


def _warm(pool: ServerPool, index: Index, wanted: list[str], texts: list[str]) -> dict[str, str]:
    """Start each language's server, let it load its project, and ask every question once."""
    pool.warm(index.files, lambda path: _read(index.root / path), WARM_UP_SECONDS, only=wanted)
    states = {}
    for language in wanted:
        client = pool.client_for(language)
        states[language] = client if isinstance(client, str) else \
            f"{client.spec.name} {client.status().get('version')}: {client.state}"
    for text in texts:
        _rank(index, text, pool)
    return states


def _polyglot_cost() -> None:
    index = Index(POLYGLOT, use_cache=False)
    index.refresh()
    pool = ServerPool(POLYGLOT, {})
    try:
        states = _warm(pool, index, ["python", "typescript"], POLYGLOT_QUESTIONS)
        timings = {"patterns only": [], "with warm servers": [], "with warm servers, asked again": []}
        answered = Counter()
        for round_ in range(REPEATS):
            for text in POLYGLOT_QUESTIONS:
                timings["patterns only"].append(_rank(index, text, None)[1])
                _, elapsed, notes = _rank(index, text, pool)
                timings["with warm servers"].append(elapsed)
                for note in notes:
                    answered[note["server"]] += note["answered"]
                    answered[f"{note['server']} calls"] += note["calls"]
                _rank(index, text, pool, remember=True)
                timings["with warm servers, asked again"].append(_rank(index, text, pool, remember=True)[1])
            # An edit between rounds: the next round's first asking may not reuse this round's answers.
            index.set_file("scripts/edited.py", f"ROUND = {round_}\n")
    finally:
        pool.stop()
        index.close()
    print(f"Cost of composition per retrieval, polyglot fixture, {len(POLYGLOT_QUESTIONS)} questions × {REPEATS}"
          f" (servers: {'; '.join(states.values())}):\n")
    print("| provider | p50 ms | p95 ms | max ms |\n|---|---|---|---|")
    for label, values in timings.items():
        print(f"| {label} | {statistics.median(values):.1f} | {percentile(values, 0.95):.1f} | {max(values):.1f} |")
    print(f"\nServer calls answered / made: {dict(sorted(answered.items()))}\n")


def _localisation(args: argparse.Namespace) -> None:
    cases = [json.loads(line) for line in args.cases_file.read_text().splitlines() if line.strip()]
    cases = cases[:args.cases] if args.cases else cases
    rows = {"patterns only": {}, "with a warm Python server": {}, "with a warm Python server, asked again": {}}
    latencies = {label: [] for label in rows}
    calls = Counter()
    for case in cases:
        tree = _tree(case, args.repos_dir, None)
        index = Index(tree, use_cache=False)
        index.refresh()
        gold = set(case["gold_files"])
        text = case["problem_statement"]
        files, elapsed, _ = _rank(index, text, None)
        rows["patterns only"][case["instance_id"]] = _gold_rank(files, gold)
        latencies["patterns only"].append(elapsed)
        pool = ServerPool(tree, {})
        try:
            state = _warm(pool, index, ["python"], [text])["python"]
            files, elapsed, notes = _rank(index, text, pool)
            _rank(index, text, pool, remember=True)
            again, again_elapsed, again_notes = _rank(index, text, pool, remember=True)
        finally:
            pool.stop()
            index.close()
        rows["with a warm Python server"][case["instance_id"]] = _gold_rank(files, gold)
        latencies["with a warm Python server"].append(elapsed)
        rows["with a warm Python server, asked again"][case["instance_id"]] = _gold_rank(again, gold)
        latencies["with a warm Python server, asked again"].append(again_elapsed)
        calls["remembered when asked again"] += sum(note["remembered"] for note in again_notes)
        calls["made when asked again"] += sum(note["calls"] for note in again_notes)
        for note in notes:
            calls["made"] += note["calls"]
            calls["answered"] += note["answered"]
            if note["skipped"]:
                calls[f"skipped: {note['skipped'].split(':')[0]}"] += 1
        print(f"{case['instance_id']}: {state}; gold rank {rows['patterns only'][case['instance_id']]} → "
              f"{rows['with a warm Python server'][case['instance_id']]}; {notes}", file=sys.stderr)
    print(f"Localisation on {len(cases)} dev cases, with and without a warm Python language server:\n")
    print("| provider | acc@1 | acc@5 | acc@10 | MRR | p50 ms | p95 ms |\n|---|---|---|---|---|---|---|")
    for label, ranks in rows.items():
        acc = [sum(1 for r in ranks.values() if r is not None and r <= k) / len(cases) for k in (1, 5, 10)]
        mrr = sum(1 / r for r in ranks.values() if r is not None and r <= MRR_DEPTH) / len(cases)
        print(f"| {label} | " + " | ".join(f"{a:.2f}" for a in acc)
              + f" | {mrr:.3f} | {statistics.median(latencies[label]):.1f} | "
              f"{percentile(latencies[label], 0.95):.1f} |")
    print(f"\nServer calls: {dict(sorted(calls.items()))}")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases-file", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--cases", type=int, help="only the first N cases")
    parser.add_argument("--repos-dir", type=Path, default=Path("/tmp/rag-bench"),
                        help="case trees written by bench/localize_bench.py")
    parser.add_argument("--skip-localize", action="store_true", help="only the polyglot cost")
    return parser.parse_args()


if __name__ == "__main__":
    main()
