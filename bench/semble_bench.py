"""Measure code search on the development part of Semble's benchmark: NDCG@10 over places.

``/work/shared/bench/semble/`` holds 21 repositories (``repos.json``: URL,
pinned revision, the folder to index) and 419 questions (``annotations/``:
a question, its category — architecture, semantic or symbol — and the files
or line spans that answer it). Its README defines the metric, Semble's
NDCG@10: the top 10 (path, start_line, end_line) places; a target counts at
the rank of the first place in its file (suffix match at a ``/`` boundary)
that overlaps its span when it has one; the ideal DCG uses min(10, targets
whose file exists in the checkout, inside the indexed folder or not). Mean
over a repository's questions; overall = mean over repositories, per
category = mean over repositories of their category means.

Each repository is checked out at its pinned revision from the mirrors
(``trees.py``); httpx's and circe's revisions are newer than the mirrors, so
the mirror's newest commit is used and the output says so. rag_lsp indexes
``benchmark_root`` and answers as ``rag-lsp context --top-k 10`` does
(``common.rank_places``: the default ranker, the default 4,000-token budget).
Places are scored with paths relative to the repository root. Same-run
baselines (``baselines.py``): BM25Okapi over 40-line windows and over whole
files of the same indexed files; a whole-file place spans its file, so it
matches every span target in it. Latency is one warm query, indexing excluded.

Run (trees, index cache and details stay under /work/benchtrees):
    .venv/bin/python bench/semble_bench.py [--only fastapi|python ...] [--details [JSONL]]
        [--disable STRATEGY ...] [--ablation] [--ranker lexical]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from baselines import BM25Baseline, TokenCache, window_documents
from common import Answer, Place, rank_places, timed_warm
from metrics import NDCG_K, Target, ndcg, path_matches, target_rank
from report import (
    AnswerTally,
    Details,
    add_options,
    counts,
    details_path,
    machine_line,
    rag_lsp_systems,
    run_footer,
    selected,
    table,
)
from trees import checkout, mirror_of, resolve_commit, tree_files

from rag_lsp.index.root_index import Index

SEMBLE = Path("/work/shared/bench/semble")
CATEGORIES = ("architecture", "semantic", "symbol")
BM25_WINDOWS = "BM25 40-line windows"
BM25_FILES = "BM25 whole files"


@dataclass(frozen=True)
class Repository:
    name: str
    language: str
    repo: str
    commit: str
    pinned: bool
    root: str


@dataclass
class Scores:
    """One retriever's NDCG@10 per repository and category, and its warm latencies."""

    ndcg: dict[str, list[tuple[str, float]]] = field(default_factory=lambda: defaultdict(list))
    latencies_ms: list[float] = field(default_factory=list)

    def repo_mean(self, repo: str, category: str | None = None) -> float | None:
        values = [value for cat, value in self.ndcg[repo] if category in (None, cat)]
        return statistics.mean(values) if values else None

    def mean_over(self, repos: list[str], category: str | None = None) -> float:
        """Semble's aggregate: the mean over repositories of their (category) means."""
        means = [mean for repo in repos if (mean := self.repo_mean(repo, category)) is not None]
        return statistics.mean(means) if means else float("nan")


@dataclass
class Shortfalls:
    """Why rag_lsp's answers miss, counted over the questions measured."""

    tally: AnswerTally = field(default_factory=lambda: AnswerTally(NDCG_K))
    zero: Counter = field(default_factory=Counter)
    targets: int = 0
    targets_absent: int = 0
    targets_unindexed: int = 0
    no_target_exists: int = 0

    def add(self, answer: Answer, score: float, category: str, targets: list[Target], existing: int,
            indexed: list[str]) -> None:
        self.tally.add(answer, score == 0)
        self.zero[category] += score == 0
        self.targets += len(targets)
        self.targets_absent += len(targets) - existing
        self.targets_unindexed += sum(1 for t in targets if not any(path_matches(p, t.path) for p in indexed))
        self.no_target_exists += existing == 0

    def lines(self) -> list[str]:
        return [
            *self.tally.lines(f"questions with NDCG@{NDCG_K} = 0 ({counts(self.zero)})"),
            (f"- targets: {self.targets}; whose file is not in the checkout: {self.targets_absent}; not indexed "
             f"by rag_lsp (outside the indexed folder, or skipped): {self.targets_unindexed}; questions with no "
             f"target file in the checkout: {self.no_target_exists}"),
        ]


def main() -> None:
    args = _parse_args()
    specs = [spec for spec in json.loads((SEMBLE / "repos.json").read_text())
             if selected(args.only, spec["name"], spec["language"], _owner_name(spec["url"]))]
    if not specs:
        sys.exit("no repository matches --only")
    systems = rag_lsp_systems(args)
    main_label = next(iter(systems))
    scores = {label: Scores() for label in (BM25_WINDOWS, BM25_FILES, *systems)}
    shortfalls = Shortfalls()
    details = Details(details_path(args.details, "semble"))
    repositories = []
    started = time.perf_counter()
    indexing_s = 0.0
    for spec in sorted(specs, key=lambda spec: spec["name"]):
        repository, tree = _checkout(args, spec)
        repositories.append(repository)
        index = Index(tree / repository.root if repository.root else tree, cache_root=args.cache_dir)
        stats = index.refresh()
        indexing_s += stats.elapsed_ms / 1000
        prefix = f"{repository.root}/" if repository.root else ""
        present = tree_files(tree)
        indexed = [prefix + path for path in index.files]
        baselines = {BM25_WINDOWS: BM25Baseline(window_documents(index)),
                     BM25_FILES: BM25Baseline(TokenCache().file_documents(index))}
        for question in json.loads((SEMBLE / "annotations" / f"{spec['name']}.json").read_text()):
            targets = [Target.parse(raw) for raw in (*question["relevant"], *question.get("secondary", ()))]
            existing = sum(1 for target in targets if any(path_matches(path, target.path) for path in present))
            record = {"repo": repository.name, "language": repository.language, "category": question["category"],
                      "query": question["query"]}
            for label, baseline in baselines.items():
                places, elapsed = baseline.rank(question["query"], NDCG_K)
                _score(scores[label], details, record | {"system": label}, places, prefix, targets, existing,
                       elapsed)
            for label, ranker in systems.items():
                answer, elapsed = timed_warm(partial(rank_places, index, question["query"], NDCG_K, ranker))
                score = _score(scores[label], details, record | {"system": label, "truncated": answer.truncated},
                               list(answer.places), prefix, targets, existing, elapsed)
                if label == main_label:
                    shortfalls.add(answer, score, question["category"], targets, existing, indexed)
        index.close()
        print(f"{repository.name}: {stats.files} files, {stats.chunks} chunks ({stats.parsed} parsed), "
              f"{main_label} NDCG@10 {scores[main_label].repo_mean(repository.name):.3f}", file=sys.stderr)
    details.close()
    _report(args, repositories, scores, main_label, shortfalls, time.perf_counter() - started, indexing_s)


def _checkout(args: argparse.Namespace, spec: dict) -> tuple[Repository, Path]:
    """The repository's tree at its pinned revision, or at the mirror's newest commit when it lacks it."""
    repo = _owner_name(spec["url"])
    mirror = mirror_of(args.mirrors_dir, repo)
    commit, pinned = resolve_commit(mirror, spec["revision"])
    tree = checkout(mirror, commit, args.trees_dir / repo.replace("/", "__"))
    root = (spec.get("benchmark_root") or "").strip("/")
    return Repository(spec["name"], spec["language"], repo, commit, pinned, root), tree


def _score(scores: Scores, details: Details, record: dict, places: list[Place], prefix: str,
           targets: list[Target], existing: int, elapsed: float) -> float:
    """NDCG@10 of one answer, with its places' paths made relative to the repository root."""
    located = [(prefix + place.path, place.start_line, place.end_line) for place in places]
    score = ndcg(located, targets, existing)
    scores.ndcg[record["repo"]].append((record["category"], score))
    scores.latencies_ms.append(elapsed)
    details.write(record | {
        "ndcg10": round(score, 4), "targets": len(targets), "targets_present": existing,
        "target_ranks": [target_rank(located[:NDCG_K], target) for target in targets],
        "places": [f"{path}:{start}-{end}" for path, start, end in located],
    })
    return score


def _report(args: argparse.Namespace, repositories: list[Repository], scores: dict[str, Scores], main_label: str,
            shortfalls: Shortfalls, wall_s: float, indexing_s: float) -> None:
    labels = list(scores)
    names = [repository.name for repository in repositories]
    pinned = [repository.name for repository in repositories if repository.pinned]
    questions = {name: len(scores[labels[0]].ndcg[name]) for name in names}
    print(machine_line(f"Semble development set, NDCG@{NDCG_K} ({len(names)} repositories, "
                       f"{sum(questions.values())} questions)") + "\n")
    rows = [[f"all ({len(names)} repositories)", sum(questions.values()),
             *(scores[label].mean_over(names) for label in labels)]]
    if len(pinned) < len(names):
        rows.append([f"all at pinned revisions ({len(pinned)} repositories)", sum(questions[n] for n in pinned),
                     *(scores[label].mean_over(pinned) for label in labels)])
    for category in CATEGORIES:
        count = sum(1 for name in names for cat, _ in scores[labels[0]].ndcg[name] if cat == category)
        rows.append([category, count, *(scores[label].mean_over(names, category) for label in labels)])
    print(table(["questions", "n", *labels], rows, decimals=3))
    print(f"\nPer repository (mean NDCG@{NDCG_K} over its questions; a language of several repositories gets "
          "a mean row):\n")
    print(table(["repository", "language", "commit", "n", *labels], _repository_rows(repositories, scores, labels),
                decimals=3))
    unpinned = [f"- {repository.name}: the mirror lacks the pinned revision; measured at the mirror's newest "
                f"commit {repository.commit[:12]}" for repository in repositories if not repository.pinned]
    print(run_footer({label: system.latencies_ms for label, system in scores.items()}, main_label,
                     [*shortfalls.lines(), *unpinned], wall_s, indexing_s, args.cache_dir,
                     str(details_path(args.details, "semble")) if args.details else None))


def _repository_rows(repositories: list[Repository], scores: dict[str, Scores], labels: list[str]) -> list[list]:
    by_language: dict[str, list[Repository]] = defaultdict(list)
    for repository in repositories:
        by_language[repository.language].append(repository)
    rows: list[list] = []
    for language in sorted(by_language):
        group = by_language[language]
        for repository in group:
            commit = repository.commit[:12] + ("" if repository.pinned else " (newest, not pinned)")
            rows.append([repository.name, language, commit, len(scores[labels[0]].ndcg[repository.name]),
                         *(scores[label].repo_mean(repository.name) for label in labels)])
        if len(group) > 1:
            names = [repository.name for repository in group]
            rows.append([f"*{language}, mean*", language, "", sum(len(scores[labels[0]].ndcg[n]) for n in names),
                         *(scores[label].mean_over(names) for label in labels)])
    return rows


def _owner_name(url: str) -> str:
    return url.removeprefix("https://github.com/").removesuffix(".git")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_options(parser, "semble")
    return parser.parse_args()


if __name__ == "__main__":
    main()
