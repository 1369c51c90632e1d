"""Measure bug localisation: does the ranking put the files a real fix changed at the top?

Two development sets (``/work/shared/bench/README.md`` defines them and their
metrics): ``dev-localize.jsonl``, 22 Python issues (SWE-bench Lite dev), and
``dev-localize-multilang.jsonl``, 200 issues in 8 other languages. Each case
is a GitHub issue and the files its accepted fix changed. The repository is
moved to the case's base commit (``trees.py``), indexed as ``rag-lsp``
indexes it, and asked the issue text; the answer's distinct files are scored:
acc@k = all gold files among the first k, hit@k = any of them, MRR = 1/rank
of the first gold file within the first 20. Scored per language and overall.

rag_lsp's answer is ``common.rank_files``: ``rag-lsp context`` with the
default ranker, asked for 100 places with no token budget (the order of the
files is measured, not what a 4,000-token answer holds). The same run
computes the baselines (``baselines.py``): BM25Okapi over the whole files
rag_lsp indexed, and over those of them in a language rag_lsp parses (the
README's reference ranks "all source extensions of these languages").
Latency is one warm query (asked once before, so per-index tables exist),
indexing excluded.

Run (the trees, the index cache and the details stay under /work/benchtrees):
    .venv/bin/python bench/localize_bench.py [--set python|multilang] [--only fmt|cpp ...]
        [--details [JSONL]] [--disable STRATEGY ...] [--ablation] [--ranker lexical]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from baselines import BM25Baseline, TokenCache, source_only
from common import FILE_PLACES, Answer, rank_files, timed_warm
from metrics import KS, MRR_DEPTH, all_gold_rank, distinct_files, first_gold_rank, mean_reciprocal_rank, share_within
from report import (
    AnswerTally,
    Details,
    add_options,
    details_path,
    machine_line,
    rag_lsp_systems,
    run_footer,
    selected,
    table,
)
from trees import checkout, mirror_of

from rag_lsp.index.root_index import Index

SETS = {
    "python": Path("/work/shared/bench/dev-localize.jsonl"),
    "multilang": Path("/work/shared/bench/dev-localize-multilang.jsonl"),
}
BM25_FILES = "BM25 whole files"
BM25_SOURCE = "BM25 whole source files"
# Files of an answer kept in the details file.
DETAIL_FILES = 10


@dataclass
class Scores:
    """One retriever's ranks per case (language, all-gold rank, first-gold rank) and warm latencies."""

    ranks: list[tuple[str, int | None, int | None]] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)

    def row(self, language: str, label: str) -> list[object]:
        chosen = [(every, first) for lang, every, first in self.ranks if language in ("all", lang)]
        every, first = [rank for rank, _ in chosen], [rank for _, rank in chosen]
        return [language, len(chosen), label, *(share_within(every, k) for k in KS),
                *(share_within(first, k) for k in KS), f"{mean_reciprocal_rank(first):.3f}"]


@dataclass
class Shortfalls:
    """Why rag_lsp's answers miss, counted over the cases measured."""

    tally: AnswerTally = field(default_factory=lambda: AnswerTally(FILE_PLACES))
    few_files: int = 0
    misses_gold_unindexed: int = 0

    def add(self, answer: Answer, files: list[str], gold: set[str], indexed: set[str], first: int | None) -> None:
        missed = first is None or first > max(KS)
        self.tally.add(answer, missed)
        self.few_files += len(files) < MRR_DEPTH
        self.misses_gold_unindexed += missed and not gold <= indexed

    def lines(self) -> list[str]:
        return [
            *self.tally.lines(f"cases with no gold file in the first {max(KS)} files"),
            f"- answers with fewer than {MRR_DEPTH} distinct files: {self.few_files} of {self.tally.answers}",
            f"- misses where a gold file is not indexed: {self.misses_gold_unindexed}",
        ]


def main() -> None:
    args = _parse_args()
    cases = _cases(args)
    if not cases:
        sys.exit("no case matches --only")
    systems = rag_lsp_systems(args)
    main_label = next(iter(systems))
    scores = {label: Scores() for label in (BM25_FILES, BM25_SOURCE, *systems)}
    shortfalls = Shortfalls()
    details = Details(details_path(args.details, args.set))
    tokens = TokenCache()
    started = time.perf_counter()
    indexing_s = 0.0
    for number, case in enumerate(cases, 1):
        owner, name = case["repo"].split("/")
        tree = checkout(mirror_of(args.mirrors_dir, case["repo"]), case["base_commit"],
                        args.trees_dir / f"{owner}__{name}")
        index = Index(tree, cache_root=args.cache_dir)
        stats = index.refresh()
        indexing_s += stats.elapsed_ms / 1000
        gold = set(case["gold_files"])
        language = case.get("language", "python")
        documents = tokens.file_documents(index)
        for label, baseline in ((BM25_FILES, BM25Baseline(documents)),
                                (BM25_SOURCE, BM25Baseline(source_only(documents)))):
            places, elapsed = baseline.rank(case["problem_statement"], len(baseline.places))
            _record(scores[label], details, case, language, label, [p.path for p in places], elapsed, None)
        for label, ranker in systems.items():
            answer, elapsed = timed_warm(partial(rank_files, index, case["problem_statement"], ranker))
            files = distinct_files(place.path for place in answer.places)
            first = _record(scores[label], details, case, language, label, files, elapsed, answer)
            if label == main_label:
                shortfalls.add(answer, files, gold, set(index.files), first)
        index.close()
        print(f"[{number}/{len(cases)}] {case['instance_id']}: {stats.files} files ({stats.parsed} parsed), "
              f"{main_label} gold rank {scores[main_label].ranks[-1][1:]}", file=sys.stderr)
    details.close()
    _report(args, scores, main_label, shortfalls, time.perf_counter() - started, indexing_s)


def _cases(args: argparse.Namespace) -> list[dict]:
    """The selected cases by repository, then by issue number (roughly by date), so that the repository's
    tree moves by small steps from commit to commit."""
    cases = [json.loads(line) for line in (args.cases or SETS[args.set]).read_text().splitlines() if line.strip()]
    cases = [case for case in cases
             if selected(args.only, case["repo"], case["repo"].split("/")[1], case.get("language", "python"))]
    return sorted(cases, key=lambda case: (case["repo"], int(case["instance_id"].rsplit("-", 1)[1]),
                                           case["instance_id"]))


def _record(scores: Scores, details: Details, case: dict, language: str, label: str, files: list[str],
            elapsed: float, answer: Answer | None) -> int | None:
    """Score one answer, write its details line and return the rank of its first gold file."""
    gold = set(case["gold_files"])
    every, first = all_gold_rank(files, gold), first_gold_rank(files, gold)
    scores.ranks.append((language, every, first))
    scores.latencies_ms.append(elapsed)
    record = {"case": case["instance_id"], "repo": case["repo"], "language": language, "system": label,
              "all_gold_rank": every, "first_gold_rank": first, "files": files[:DETAIL_FILES],
              "file_count": len(files)}
    if answer is not None:
        record |= {"places": len(answer.places), "truncated": answer.truncated, "out_of_time": answer.out_of_time}
    details.write(record)
    return first


def _report(args: argparse.Namespace, scores: dict[str, Scores], main_label: str, shortfalls: Shortfalls,
            wall_s: float, indexing_s: float) -> None:
    cases = len(next(iter(scores.values())).ranks)
    languages = sorted({language for language, _, _ in next(iter(scores.values())).ranks})
    groups = [*languages, "all"] if len(languages) > 1 else languages
    print(machine_line(f"Localisation, {args.set} set ({cases} cases)") + "\n")
    header = ["language", "n", "retriever", *(f"acc@{k}" for k in KS), *(f"hit@{k}" for k in KS), "MRR"]
    print(table(header, [system.row(group, label) for group in groups for label, system in scores.items()]))
    print(run_footer({label: system.latencies_ms for label, system in scores.items()}, main_label,
                     shortfalls.lines(), wall_s, indexing_s, args.cache_dir,
                     str(details_path(args.details, args.set)) if args.details else None))


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--set", choices=SETS, default="python", help="which development set (default: python)")
    parser.add_argument("--cases", type=Path, help="a cases file of the same format instead of --set's")
    add_options(parser, "localize")
    return parser.parse_args()


if __name__ == "__main__":
    main()
