"""Measure bug localisation: does the ranking put the file a real fix changed at the top?

The cases are real GitHub issues with the files their accepted fix changed
(``/work/shared/bench/dev-localize.jsonl``, the SWE-bench Lite dev split; its
README defines the metrics). For each case the repository is checked out at
the case's base commit, indexed, and asked the issue text; the ranking's
distinct files are scored against the gold files. The same run computes the
reference points, so numbers compare on one machine: BM25 over whole files
(``rank_bm25.BM25Okapi``, the project's tokenizer) and the previous default
ranker (``LexicalRanker``). An ablation switches each strategy off in turn.

Getting the repositories (never inside the project): mirror each repository
named in the cases as ``MIRRORS/<owner>+<name>/repo``, a bare git directory,
e.g. ``git clone --mirror https://github.com/pvlib/pvlib-python
/tmp/mirrors/pvlib+pvlib-python/repo``. The script then writes a tree per
case under ``--repos-dir`` (``<owner>__<name>@<commit12>``) from the
mirror's blobs; blobs a mirror lacks (files of 4 MiB and more) are skipped.
Trees already present are reused.

Run: .venv/bin/python bench/localize_bench.py [--repos-dir /tmp/rag-bench] [--mirrors-dir /work/.mirror]
     [--cache-dir /tmp/rag-bench-cache] [--no-ablation] [--details]
Latency is per query on a warm index (indexing excluded): the query is asked
once to warm per-index tables, then timed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from common import percentile
from rank_bm25 import BM25Okapi

from rag_lsp.index.root_index import Index
from rag_lsp.index.terms import path_tokens, tokenize
from rag_lsp.retrieval.fusion import FusionRanker
from rag_lsp.retrieval.query import parse_query
from rag_lsp.retrieval.rank import LexicalRanker, Ranker
from rag_lsp.retrieval.strategies import REGISTRY

DEFAULT_CASES = Path("/work/shared/bench/dev-localize.jsonl")
KS = (1, 5, 10)
MRR_DEPTH = 20
# Candidates asked of a ranker: enough chunks for more than MRR_DEPTH distinct files.
RANK_LIMIT = 100


@dataclass
class Scores:
    """Per-system results: the rank of the gold file per case (None if absent) and latencies."""

    ranks: dict[str, int | None] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)

    def row(self, label: str, cases: int) -> str:
        acc = [sum(1 for r in self.ranks.values() if r is not None and r <= k) / cases for k in KS]
        mrr = sum(1 / r for r in self.ranks.values() if r is not None and r <= MRR_DEPTH) / cases
        p50 = statistics.median(self.latencies_ms)
        p95 = percentile(self.latencies_ms, 0.95)
        return (f"| {label} | " + " | ".join(f"{a:.2f}" for a in acc) + f" | {mrr:.3f} | {p50:.1f} | {p95:.1f} |")


# A system ranks the files of an indexed tree for a question: (files in rank order, milliseconds).
System = Callable[[Index, Path, str], tuple[list[str], float]]
FUSION = "FusionRanker (all strategies)"


def main() -> None:
    args = _parse_args()
    cases = [json.loads(line) for line in args.cases.read_text().splitlines() if line.strip()]
    systems = _systems(args.ablation)
    scores = {label: Scores() for label in systems}
    details = []
    for case in cases:
        tree = _tree(case, args.repos_dir, args.mirrors_dir)
        index = Index(tree, cache_root=args.cache_dir, use_cache=args.cache_dir is not None)
        stats = index.refresh()
        gold = set(case["gold_files"])
        for label, system in systems.items():
            files, elapsed = system(index, tree, case["problem_statement"])
            scores[label].ranks[case["instance_id"]] = _gold_rank(files, gold)
            scores[label].latencies_ms.append(elapsed)
            if label == FUSION:
                details.append((case["instance_id"], stats.files, _gold_rank(files, gold), files[:3]))
        index.close()
        print(f"{case['instance_id']}: {stats.files} files, gold rank {details[-1][2]}", file=sys.stderr)
    _report(scores, len(cases), details if args.details else [])


def _systems(ablation: bool) -> dict[str, System]:
    """The baselines, the fused ranking and, for the ablation, the fused ranking without each strategy."""
    systems: dict[str, System] = {
        "BM25 over whole files (rank_bm25)": _whole_files,
        "LexicalRanker (BM25 chunks + symbol boosts)": _asking(LexicalRanker()),
        FUSION: _asking(FusionRanker()),
    }
    for name in REGISTRY if ablation else ():
        systems[f"FusionRanker without {name}"] = _asking(FusionRanker(disabled=frozenset({name})))
    return systems


def _asking(ranker: Ranker) -> System:
    return lambda index, _tree, text: _ranked_files(ranker, index, text)


def _ranked_files(ranker: Ranker, index: Index, text: str) -> tuple[list[str], float]:
    """Distinct files in rank order, and the time of a warm query (parsing the question included)."""
    ranker.rank(index, parse_query(text), RANK_LIMIT)
    started = time.perf_counter()
    candidates = ranker.rank(index, parse_query(text), RANK_LIMIT).candidates
    elapsed = (time.perf_counter() - started) * 1000
    return list(dict.fromkeys(index.chunks[c.chunk_id].path for c in candidates)), elapsed


def _whole_files(index: Index, tree: Path, text: str) -> tuple[list[str], float]:
    """The README's first reference row: BM25Okapi over the whole indexed files (building it is not timed)."""
    paths = sorted(index.files)
    bm25 = BM25Okapi([tokenize((tree / p).read_text("utf-8", "replace")) + path_tokens(p) for p in paths])
    started = time.perf_counter()
    scores = bm25.get_scores(tokenize(text))
    order = sorted(range(len(paths)), key=lambda i: (-scores[i], paths[i]))
    elapsed = (time.perf_counter() - started) * 1000
    return [paths[i] for i in order], elapsed


def _gold_rank(files: list[str], gold: set[str]) -> int | None:
    """The rank at which all gold files have been seen (acc@k counts a case when this is ≤ k)."""
    seen = set()
    for rank, path in enumerate(files, 1):
        if path in gold:
            seen.add(path)
            if seen == gold:
                return rank
    return None


def _report(scores: dict[str, Scores], cases: int, details: list) -> None:
    print(f"Localisation on {cases} cases — {datetime.date.today()}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs. Latency: per query, warm index, indexing excluded.\n")
    print("| retriever | acc@1 | acc@5 | acc@10 | MRR | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|")
    for label, system_scores in scores.items():
        print(system_scores.row(label, cases))
    if details:
        print("\n| case | files | gold rank | first files |\n|---|---|---|---|")
        for case_id, files, rank, first in details:
            print(f"| {case_id} | {files} | {rank or '—'} | {', '.join(first)} |")


def _tree(case: dict, repos_dir: Path, mirrors_dir: Path | None) -> Path:
    """The case's checkout at its base commit, written from the mirror when missing."""
    owner, name = case["repo"].split("/")
    tree = repos_dir / f"{owner}__{name}@{case['base_commit'][:12]}"
    if tree.is_dir() and (tree / ".complete").exists():
        return tree
    if mirrors_dir is None:
        sys.exit(f"missing tree {tree}; pass --mirrors-dir to write it from a mirror")
    _materialise(mirrors_dir / f"{owner}+{name}" / "repo", case["base_commit"], tree)
    return tree


def _materialise(mirror: Path, commit: str, tree: Path) -> None:
    """Write ``commit``'s files under ``tree`` from a bare mirror, skipping blobs the mirror lacks."""
    if tree.exists():
        shutil.rmtree(tree)
    git = ["git", f"--git-dir={mirror}"]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    entries = []
    for record in listing.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            mode, kind, sha = meta.split()
            # Regular files only: symlinks and submodules are not part of what is indexed.
            if kind == b"blob" and mode in (b"100644", b"100755"):
                entries.append((sha.decode(), path.decode("utf-8", "surrogateescape")))
    batch = subprocess.run([*git, "cat-file", "--batch"], input=b"".join(s.encode() + b"\n" for s, _ in entries),
                           capture_output=True, check=True).stdout
    offset = 0
    for _, path in entries:
        header_end = batch.index(b"\n", offset)
        header = batch[offset:header_end].split()
        offset = header_end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[offset:offset + size])
        offset += size + 1
    (tree / ".complete").write_text(commit)


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--repos-dir", type=Path, default=Path("/tmp/rag-bench"),
                        help="where case trees live (written from --mirrors-dir when missing)")
    parser.add_argument("--mirrors-dir", type=Path, help="bare mirrors as MIRRORS/<owner>+<name>/repo")
    parser.add_argument("--cache-dir", type=Path, help="index cache (default: index in memory)")
    parser.add_argument("--no-ablation", dest="ablation", action="store_false", help="skip the ablation rows")
    parser.add_argument("--details", action="store_true", help="also print the gold rank of every case")
    return parser.parse_args()


if __name__ == "__main__":
    main()
