"""Measure token efficiency: how many tokens a bundle needs before the file a fix changed is in it.

The development sets of ``localize_bench.py`` (issue text → the files the accepted fix changed). Each case
is asked once per arm, in the same run, on the same index, with the same budget and topK:

- ``top-k chunks``: ``mode: "ranked"``, the plain ranked chunks by score (what rag_lsp answered before task
  bundles);
- ``bundle, no template``: ``mode: "task"`` with ``taskType: "general"`` for every case, verbosity minimal;
- ``bundle, task template``: the task type classified from the issue text, verbosity minimal;
- ``bundle, task template, standard``: the same at verbosity standard (raw source for every task).

Each answer is rendered as its prompt block (``--format prompt``); the measure is the cl100k tokens of the
bundle part of the block (from its first section heading, so the list of places with their reasons that
opens every block is left out) to the end of the first place of a gold file (its code or summary; a file
merely named in a relationship list does not count). A case whose block holds no gold file is a miss. Each
case is asked once before the arms, so that per-index tables exist and the latencies are warm ones. Reported: the share
of cases whose bundle holds a gold file, and the median and mean tokens-to-gold over the cases where every
arm holds one (so the arms are compared on the same cases), and the median size of the whole block.

Run (trees and the index cache under /work/benchtrees, as for localize_bench.py):
    .venv/bin/python bench/bundle_bench.py [--set python|multilang] [--only REPO ...] [--budget 8000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from localize_bench import SETS, _cases
from report import add_options, machine_line, table
from trees import checkout, mirror_of

from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.answer import ContextAnswer, ContextRequest
from rag_lsp.retrieval.bundle.prompt_block import prompt_block
from rag_lsp.retrieval.bundle.tokenizers import tokenizer
from rag_lsp.retrieval.retrieve import retrieve

ARMS = {
    "top-k chunks": {"mode": "ranked"},
    "bundle, no template": {"mode": "task", "task_type": "general", "verbosity": "minimal"},
    "bundle, task template": {"mode": "task", "verbosity": "minimal"},
    "bundle, task template, standard": {"mode": "task", "verbosity": "standard"},
}


@dataclass
class Arm:
    """One arm's measures per case: tokens to the first gold place (None: no gold file in the bundle), the
    block's tokens, and the answers' latencies."""

    to_gold: list[int | None] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)


def tokens_to_gold(answer: ContextAnswer, gold: set[str]) -> tuple[int | None, int]:
    """The cl100k tokens of the block's sections up to the end of the first gold place, and of the whole block."""
    counter = tokenizer("cl100k")
    whole = prompt_block(answer)
    block = whole[whole.find("\n## ") + 1:]
    ends = []
    for item in answer.items:
        if item.path not in gold:
            continue
        header = f"### {item.path}:{item.start_line}-{item.end_line}"
        start = block.find(header) if item.shown != "unchanged" else -1
        if start >= 0:
            fence = block.find("\n```", block.find("\n", start) + 1 + len(item.content))
            ends.append(fence + 4 if fence >= 0 else len(block))
    return (counter.count(block[:min(ends)]) if ends else None), counter.count(whole)


def main() -> None:
    args = _parse_args()
    cases = _cases(args)
    if not cases:
        sys.exit("no case matches --only")
    arms = {label: Arm() for label in ARMS}
    types: Counter[str] = Counter()
    started = time.perf_counter()
    for number, case in enumerate(cases, 1):
        owner, name = case["repo"].split("/")
        tree = checkout(mirror_of(args.mirrors_dir, case["repo"]), case["base_commit"],
                        args.trees_dir / f"{owner}__{name}")
        index = Index(tree, cache_root=args.cache_dir)
        index.refresh()
        gold = set(case["gold_files"])
        retrieve(index, ContextRequest(case["problem_statement"], args.top_k, args.budget))
        for label, options in ARMS.items():
            request = ContextRequest(case["problem_statement"], args.top_k, args.budget, **options)
            asked = time.perf_counter()
            answer = retrieve(index, request)
            arms[label].latencies_ms.append((time.perf_counter() - asked) * 1000)
            to_gold, size = tokens_to_gold(answer, gold)
            arms[label].to_gold.append(to_gold)
            arms[label].sizes.append(size)
            if label == "bundle, task template":
                types[answer.task.task_type] += 1
        index.close()
        print(f"[{number}/{len(cases)}] {case['instance_id']}: "
              + ", ".join(f"{label} {arm.to_gold[-1]}" for label, arm in arms.items()), file=sys.stderr)
    _report(args, arms, types, len(cases), time.perf_counter() - started)


def _report(args: argparse.Namespace, arms: dict[str, Arm], types: Counter[str], cases: int, wall_s: float) -> None:
    every = [position for position in range(cases) if all(arm.to_gold[position] is not None for arm in arms.values())]
    print(machine_line(f"Token efficiency, {args.set} set ({cases} cases; budget {args.budget}, topK {args.top_k})")
          + "\n")
    rows = []
    for label, arm in arms.items():
        found = [value for value in arm.to_gold if value is not None]
        common = [arm.to_gold[position] or 0 for position in every]
        rows.append([label, f"{len(found)}/{cases}", f"{statistics.median(common):.0f}" if common else "-",
                     f"{statistics.mean(common):.0f}" if common else "-", f"{statistics.median(arm.sizes):.0f}",
                     f"{statistics.median(arm.latencies_ms):.0f}"])
    print(table(["arm", "gold file in the bundle", f"median tokens to gold ({len(every)} cases)",
                 "mean tokens to gold", "median block tokens", "median ms"], rows))
    print("\nTask types classified: " + ", ".join(f"{name} {count}" for name, count in types.most_common()))
    print(f"\nWall time {wall_s:.0f} s.")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--set", choices=SETS, default="python", help="which development set (default: python)")
    parser.add_argument("--cases", type=Path, help="a cases file of the same format instead of --set's")
    parser.add_argument("--budget", type=int, default=8000, help="budgetTokens of every answer (default 8000)")
    parser.add_argument("--top-k", type=int, default=10, help="topK of every answer (default 10)")
    add_options(parser, "localize")
    return parser.parse_args()


if __name__ == "__main__":
    main()
