"""Completion-context quality and latency on the dev-completion cases, beside the Jaccard-window baseline.

Usage:
    .venv/bin/python bench/completion_bench.py --trees DIR [--cases FILE] [--budget-tokens N] [--prefix-only]
        [--json OUT] [--show-misses N]
    .venv/bin/python bench/completion_bench.py --trees DIR --make-cases OWNER/NAME [--limit N] > cases.jsonl

``DIR`` holds one checked-out tree per repository, named after the
repository's last segment (``DIR/httpx`` for encode/httpx at the cases'
commit). Each case's file gets its cursor line blanked on disk while the
retrievers run (as the cases' README asks) and is restored afterwards; the
index is warm (built once per repository, then the blanked file re-indexed
like an editor's save), and so are the completion engine's caches: one
request on each case file before its cases, as an editor that has the file
open has made many (that first, cold request is reported apart). Reported per
retriever: hit@1/3/5 (one of the first k snippets lies in the gold file and
overlaps the gold lines, or an alternative gold's) and the per-request
latency (p50, p95; wall clock and the thread's CPU time, since a busy machine
inflates the first), indexing excluded.

The baseline is the "neighbouring tabs" technique: 20-line windows (step 10)
of every other indexed file of the same language, ranked by Jaccard
similarity of identifiers with the 20 lines above the cursor.

``--prefix-only`` also removes everything after the cursor line, for a
retriever that must not look below the cursor.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from rag_lsp import languages
from rag_lsp.completion import similar
from rag_lsp.completion.engine import CompletionEngine, CompletionRequest
from rag_lsp.index.outline import FileText
from rag_lsp.server.wire import completion_json as encode_completion
from rag_lsp.workspace.session import Session

DEFAULT_CASES = Path("/work/shared/bench/dev-completion.jsonl")
KS = (1, 3, 5)


def hit_rank(snippets: list[dict], golds: list[dict]) -> int | None:
    """1-based rank of the first snippet in a gold file overlapping its lines, or None."""
    for rank, snippet in enumerate(snippets, 1):
        for gold in golds:
            if (snippet["path"] == gold["path"] and snippet["start_line"] <= gold["end_line"]
                    and gold["start_line"] <= snippet["end_line"]):
                return rank
    return None


def baseline_windows(session: Session, root: Path, language: str) -> list[similar.Window]:
    index = session.roots[root].index
    found = []
    for path, entry in sorted(index.files.items()):
        if entry.language != language:
            continue
        text = FileText.from_chunks([chunk for _, chunk in index.chunks_of(path)])
        found.extend(similar.windows(path, text.lines))
    return found


def baseline(windows: list[similar.Window], lines: list[str], cursor: int, exclude: str) -> list[dict]:
    query = similar.query_terms(lines, cursor)
    ranked = similar.rank(query, [w for w in windows if w.path != exclude], 5)
    return [{"path": w.path, "start_line": w.start_line, "end_line": w.end_line} for _, w in ranked]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def run(args: argparse.Namespace) -> dict:
    cases = [json.loads(line) for line in args.cases.read_text().splitlines() if line.strip()]
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for case in cases:
        by_repo[case["repo"]].append(case)
    results = {"ours": [], "baseline": []}
    misses = []
    for repo, repo_cases in sorted(by_repo.items()):
        root = (args.trees / repo.split("/")[-1]).resolve()
        session = Session(use_cache=False)
        session.add_root(root)
        started = time.perf_counter()
        session.index_roots()
        print(f"{repo}: indexed in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        engine = CompletionEngine(session)
        windows_by_language: dict[str, list[similar.Window]] = {}
        warmed: set[str] = set()
        for case in repo_cases:
            path = root / case["file"]
            if case["file"] not in warmed:
                # An editor asks for context many times in a file it has open: measure warm caches,
                # and report the first (cold) request apart.
                warmed.add(case["file"])
                began = time.perf_counter()
                engine.context(CompletionRequest(path, 0, 0, budget_tokens=args.budget_tokens, time_budget_ms=1000))
                results.setdefault("cold", []).append((time.perf_counter() - began) * 1000)
            original = path.read_bytes()
            lines = original.decode("utf-8").split("\n")
            cursor = case["line"] - 1
            lines[cursor] = ""
            if args.prefix_only:
                lines = lines[: cursor + 1]
            try:
                path.write_text("\n".join(lines), encoding="utf-8")
                session.file_changed(path)
                language = languages.language_for_path(case["file"])
                if language not in windows_by_language:
                    windows_by_language[language] = baseline_windows(session, root, language)
                golds = [case["gold"], *case.get("alt_golds", [])]

                began, began_cpu = time.perf_counter(), time.thread_time()
                answer = encode_completion(engine.context(CompletionRequest(
                    path, cursor, 0, budget_tokens=args.budget_tokens, time_budget_ms=args.time_budget_ms)))
                elapsed = (time.perf_counter() - began) * 1000
                cpu = (time.thread_time() - began_cpu) * 1000
                rank = hit_rank(answer["snippets"], golds)
                results["ours"].append({"case": case["case_id"], "rank": rank, "ms": elapsed, "cpu_ms": cpu,
                                        "truncated": answer["truncated"], "tokens": answer["tokens"],
                                        "snippets": len(answer["snippets"])})
                if rank is None or rank > 1:
                    misses.append((case, rank, answer))

                began, began_cpu = time.perf_counter(), time.thread_time()
                ranked = baseline(windows_by_language[language], lines, cursor, case["file"])
                elapsed = (time.perf_counter() - began) * 1000
                cpu = (time.thread_time() - began_cpu) * 1000
                results["baseline"].append({"case": case["case_id"], "rank": hit_rank(ranked, golds), "ms": elapsed,
                                            "cpu_ms": cpu})
            finally:
                path.write_bytes(original)
                session.file_changed(path)
    cold = results.pop("cold")
    summary = {name: summarise(rows) for name, rows in results.items()}
    summary["cold_first_request_ms"] = {"files": len(cold), "p50": round(statistics.median(cold), 1),
                                        "max": round(max(cold), 1)}
    for name, rows in results.items():
        per_repo = defaultdict(list)
        for row in rows:
            per_repo[row["case"].split(":", 1)[0]].append(row)
        summary[name]["per_repo"] = {repo: summarise(rows) for repo, rows in sorted(per_repo.items())}
    if args.show_misses:
        for case, rank, answer in misses[: args.show_misses]:
            print(f"\n--- {case['case_id']} wants {case['callee']} ({case['gold']['path']}:"
                  f"{case['gold']['start_line']}); rank {rank}")
            for position, snippet in enumerate(answer["snippets"][:6], 1):
                print(f"  {position}. {snippet['path']}:{snippet['start_line']} {snippet['qualname']} "
                      f"{snippet['score']} {snippet['why']}")
    return {"summary": summary, "rows": results, "cases": len(cases), "budget_tokens": args.budget_tokens,
            "prefix_only": args.prefix_only}


def summarise(rows: list[dict]) -> dict:
    count = len(rows)
    found = {f"hit@{k}": round(sum(1 for r in rows if r["rank"] is not None and r["rank"] <= k) / count, 3)
             for k in KS}
    times = [r["ms"] for r in rows]
    cpu = [r["cpu_ms"] for r in rows]
    found.update(p50_ms=round(statistics.median(times), 2), p95_ms=round(percentile(times, 0.95), 2),
                 max_ms=round(max(times), 2), cpu_p50_ms=round(statistics.median(cpu), 2),
                 cpu_p95_ms=round(percentile(cpu, 0.95), 2), cases=count)
    if "truncated" in rows[0]:
        found["truncated"] = sum(1 for r in rows if r["truncated"])
        found["mean_snippets"] = round(statistics.mean(r["snippets"] for r in rows), 1)
        found["max_tokens"] = max(r["tokens"] for r in rows)
    return found


def make_cases(tree: Path, repo: str, limit: int, seed: int = 0) -> list[dict]:
    """Cases like dev-completion.jsonl's from another repository, to tune on without touching the dev cases.

    A case is a line of a non-test Python file that calls a function or class
    which the file imports from another file of the repository (resolved by
    rag_lsp's own import resolution, so names it cannot resolve never become
    cases: these cases measure ranking, not resolution).
    """
    import random
    import re

    from rag_lsp.index.bindings import Resolver, file_bindings
    from rag_lsp.workspace.session import is_test_path

    session = Session(use_cache=False)
    session.add_root(tree)
    session.index_roots()
    index = session.roots[tree.resolve()].index
    resolver = Resolver(index)
    call = re.compile(r"\b([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?\s*\(")
    found = []
    for path in sorted(index.files):
        if not path.endswith(".py") or is_test_path(path):
            continue
        imports = index.imports.get(path, [])
        bindings = file_bindings(imports, "python").names
        text = FileText.from_chunks([chunk for _, chunk in index.chunks_of(path)])
        import_lines = {i.line for i in imports}
        for number, line in enumerate(text.lines, 1):
            stripped = line.strip()
            if number in import_lines or stripped.startswith(("def ", "class ", "@", "#", "import ", "from ")):
                continue
            golds = []
            for match in call.finditer(line):
                binding = bindings.get(match.group(1))
                if binding is None:
                    continue
                target = resolver.binding(binding, path)
                if match.group(2) and target.modules:
                    target = resolver.attribute(target, match.group(2))
                elif target.modules:
                    continue
                for definition in target.definitions[:1]:
                    if definition.path != path and definition.kind in ("function", "class"):
                        golds.append({"path": definition.path, "start_line": definition.start_line,
                                      "end_line": definition.end_line, "kind": definition.kind,
                                      "symbol": definition.qualname})
            if golds:
                found.append({"case_id": f"{repo}:{path}:{number}", "repo": repo, "file": path, "line": number,
                              "callee": golds[0]["symbol"], "gold": golds[0], "alt_golds": golds[1:]})
    random.Random(seed).shuffle(found)
    return sorted(found[:limit], key=lambda c: (c["file"], c["line"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trees", type=Path, required=True, help="directory of checked-out repositories")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--budget-tokens", type=int, default=512)
    parser.add_argument("--time-budget-ms", type=float, default=50.0)
    parser.add_argument("--prefix-only", action="store_true", help="remove the lines after the cursor too")
    parser.add_argument("--show-misses", type=int, default=0, help="print this many cases not hit at rank 1")
    parser.add_argument("--json", type=Path, help="write the summary as JSON here")
    parser.add_argument("--make-cases", metavar="OWNER/NAME",
                        help="instead: write cases for --trees/NAME to standard output (see make_cases)")
    parser.add_argument("--limit", type=int, default=100, help="with --make-cases: at most this many cases")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override a weight of rag_lsp.completion.weights (for ablations)")
    args = parser.parse_args()
    from rag_lsp.completion import weights as completion

    for assignment in args.set:
        name, _, value = assignment.partition("=")
        if not hasattr(completion, name):
            parser.error(f"rag_lsp.completion.weights has no {name}")
        setattr(completion, name, type(getattr(completion, name))(value))
    if args.make_cases:
        for case in make_cases(args.trees / args.make_cases.split("/")[-1], args.make_cases, args.limit):
            print(json.dumps(case))
        return 0
    report = run(args)
    table = ["| retriever | hit@1 | hit@3 | hit@5 | p50 ms | p95 ms | CPU p50 ms | CPU p95 ms |",
             "|---|---|---|---|---|---|---|---|"]
    for name, label in (("ours", "rag_lsp completionContext"), ("baseline", "Jaccard 20-line windows")):
        row = report["summary"][name]
        table.append(f"| {label} | {row['hit@1']:.2f} | {row['hit@3']:.2f} | {row['hit@5']:.2f} | "
                     f"{row['p50_ms']:.1f} | {row['p95_ms']:.1f} | {row['cpu_p50_ms']:.1f} | {row['cpu_p95_ms']:.1f} |")
    print("\n".join(table))
    print(json.dumps(report["summary"], indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
