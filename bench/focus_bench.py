"""Cursor questions on real call sites: does the context for a name under the cursor put its definition first?

Usage:
    .venv/bin/python bench/focus_bench.py --trees DIR [--cases FILE] [--language-servers] [--json OUT]

The cases are the dev-completion call sites (``DIR`` as for ``bench/completion_bench.py``: one tree per
repository at the cases' commit, named after its last segment). Unlike the completion measurement the line
stays as it is: the cursor sits on the callee's name in the call (``to_bytes`` of ``to_bytes(value)``, ``Cookies``
of ``Cookies(...)``), as when a user asks about a name in front of them, and ``ragLsp/context``'s cursor
question is asked (``Session.focus_query``, then ``Session.context``, empty query text). Scored like the
completion cases: **hit@k**, one of the first k items lies in the gold file and overlaps the gold lines (or an
alternative gold's). Also counted: how often the cursor's name was rewritten as the definition it resolved to,
and how often that definition was the gold one.

Side by side, in the same process and on the same index:

- ``name and enclosing``: the question as it was before names were resolved, rebuilt here: the identifier
  under the cursor (with its receivers) and the innermost definition around the cursor, both as code names;
- ``patterns``: the session's question today: the identifier resolved through the file's imports,
  definitions and annotations, and the enclosing definition only when the identifier defines nothing;
- ``with pyright`` (``--language-servers``): the session's language servers on, warmed before the cases
  (pyright resolves first, the patterns when it does not answer).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from completion_bench import DEFAULT_CASES, KS, hit_rank, percentile

from rag_lsp.features.context import answer_context
from rag_lsp.features.focus import focus_query, word_at
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.server import wire
from rag_lsp.workspace.session import Session

# How long the servers may take to start and load a repository before its cases.
WARM_UP_SECONDS = 120.0
BEFORE = "name and enclosing"


def cursor_at(line: str, callee: str) -> int | None:
    """The code point column of the callee's name in its call on ``line``, or None when it is not there."""
    name = callee.rsplit(".", 1)[-1]
    found = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", line)
    return found.start() if found else None


def name_and_enclosing(session: Session, root: Path, rel: str, line: str, number: int, column: int) -> str:
    """The cursor question before this measurement's changes: `identifier` `innermost enclosing definition`."""
    covering = [d for d in session.roots[root].index.symbols.in_file(rel) if d.start_line <= number <= d.end_line]
    enclosing = max(covering, key=lambda d: d.start_line).qualname if covering else None
    return " ".join(f"`{name}`" for name in dict.fromkeys(n for n in (word_at(line, column), enclosing) if n))


def ask(session: Session, root: Path, case: dict, line: str, column: int, mode: str) -> tuple[dict, str, float]:
    path = root / case["file"]
    started = time.perf_counter()
    if mode == BEFORE:
        query = name_and_enclosing(session, root, case["file"], line, case["line"], column)
    else:
        query = focus_query(session, path, case["line"] - 1, column)
    answer = wire.context_json(answer_context(session, ContextRequest(query), focus=path))
    return answer, query, (time.perf_counter() - started) * 1000


def run(args: argparse.Namespace) -> dict:
    cases = [json.loads(line) for line in args.cases.read_text().splitlines() if line.strip()]
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for case in cases:
        by_repo[case["repo"]].append(case)
    modes = [BEFORE, "patterns"] + (["with pyright"] if args.language_servers else [])
    rows = []
    for repo, repo_cases in sorted(by_repo.items()):
        root = (args.trees / repo.rsplit("/", 1)[-1]).resolve()
        sessions = {mode: Session(use_cache=False, language_servers=mode == "with pyright") for mode in modes}
        for session in sessions.values():
            session.add_root(root)
            session.index_roots()
        if args.language_servers:
            served = sessions["with pyright"].roots[root]
            index = served.index
            served.servers.warm(index.files, lambda rel, index=index: (index.root / rel).read_text("utf-8"),
                                WARM_UP_SECONDS, only=["python"])
        try:
            for case in repo_cases:
                line = (root / case["file"]).read_text("utf-8").splitlines()[case["line"] - 1]
                column = cursor_at(line, case["callee"])
                if column is None:
                    rows.append({"case_id": case["case_id"], "skipped": "the callee's name is not on its line"})
                    continue
                golds = [case["gold"], *case.get("alt_golds", [])]
                row = {"case_id": case["case_id"]}
                for mode, session in sessions.items():
                    answer, query, elapsed = ask(session, root, case, line, column, mode)
                    row[mode] = {"rank": hit_rank(answer["items"], golds), "query": query, "ms": elapsed}
                rows.append(row)
                print(case["case_id"], {m: (row[m]["rank"], row[m]["query"]) for m in modes}, file=sys.stderr)
        finally:
            for session in sessions.values():
                session.close()
    return {"modes": modes, "rows": rows}


def summarise(result: dict) -> str:
    rows = [row for row in result["rows"] if "skipped" not in row]
    lines = [f"{len(rows)} cases ({len(result['rows']) - len(rows)} skipped: the callee's name is not on its line)",
             "", "| question | hit@1 | hit@3 | hit@5 | name rewritten | p50 ms | p95 ms |",
             "|---|---|---|---|---|---|---|"]
    for mode in result["modes"]:
        ranks = [row[mode]["rank"] for row in rows]
        hits = [sum(1 for r in ranks if r is not None and r <= k) / len(rows) for k in KS]
        rewritten = sum(1 for row in rows if _first_name(row[mode]["query"]) != _first_name(row[BEFORE]["query"])
                        ) / len(rows)
        times = [row[mode]["ms"] for row in rows]
        lines.append(f"| {mode} | " + " | ".join(f"{h:.2f}" for h in hits)
                     + f" | {rewritten:.2f} | {statistics.median(times):.1f} | {percentile(times, 0.95):.1f} |")
    return "\n".join(lines)


def _first_name(query: str) -> str | None:
    names = re.findall(r"`([^`]+)`", query)
    return names[0] if names else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trees", type=Path, required=True)
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--language-servers", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(args)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    print(summarise(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
