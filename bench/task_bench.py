"""Measure the task classifier's agreement with labelled questions, and the tokenizers' speed.

Classification: ``bench/task_questions.jsonl`` holds 48 questions, 8 per task type, each labelled with the
task a developer asking it has in mind (how they were written and labelled: in docs/benchmarks.md). The
classifier reads the question alone; reported are the agreement (share of questions whose classified type is
the label), the confusion per label, and how agreement goes with confidence.

Tokenizers: the time to load each encoding (first use in a fresh process is what a one-shot command pays),
and counting every chunk of an index (the text a bundle is packed from), in chunks and megabytes per second,
with the estimate for comparison.

Run:
    .venv/bin/python bench/task_bench.py [--root DIR]   (DIR: the tree whose chunks are counted; default: this repository)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from report import machine_line, table

from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.bundle.classify import classify
from rag_lsp.retrieval.bundle.templates import TASK_TYPES
from rag_lsp.retrieval.bundle.tokenizers import TOKENIZERS, tokenizer

QUESTIONS = Path(__file__).with_name("task_questions.jsonl")
# Counting passes over the chunks; the median pass is reported.
PASSES = 3


def agreement() -> None:
    cases = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    confusion: Counter[tuple[str, str]] = Counter()
    by_confidence: dict[str, list[bool]] = {"≥ 0.8": [], "0.4–0.8": [], "< 0.4": []}
    for case in cases:
        found = classify(case["question"])
        confusion[(case["task"], found.task_type)] += 1
        band = "≥ 0.8" if found.confidence >= 0.8 else "0.4–0.8" if found.confidence >= 0.4 else "< 0.4"
        by_confidence[band].append(found.task_type == case["task"])
    agreed = sum(count for (label, found), count in confusion.items() if label == found)
    print(machine_line(f"Task classification, {len(cases)} labelled questions") + "\n")
    print(f"Agreement: {agreed}/{len(cases)} ({agreed / len(cases):.0%}).\n")
    rows = [[label, *(str(confusion[(label, found)] or "") for found in TASK_TYPES)] for label in TASK_TYPES]
    print(table(["label \\ classified", *TASK_TYPES], rows))
    print()
    print(table(["confidence", "questions", "agreement"],
                [[band, str(len(hits)), f"{sum(hits) / len(hits):.0%}" if hits else "-"]
                 for band, hits in by_confidence.items()]))


def speed(root: Path) -> None:
    index = Index(root, use_cache=False)
    index.refresh()
    texts = [chunk.content for chunk in index.chunks.values()]
    megabytes = sum(len(text.encode("utf-8")) for text in texts) / 1e6
    rows = []
    for name in TOKENIZERS:
        loading = f"import sys; sys.path.insert(0, {str(Path(__file__).parents[1])!r}); import time; t = time.perf_counter(); " \
            f"from rag_lsp.retrieval.bundle.tokenizers import tokenizer; tokenizer({name!r}).count('x'); " \
            "print((time.perf_counter() - t) * 1000)"
        loaded_ms = float(subprocess.run([sys.executable, "-c", loading], capture_output=True, text=True,
                                         check=True).stdout)
        counter = tokenizer(name)
        passes = []
        for _ in range(PASSES):
            started = time.perf_counter()
            total = sum(counter.count(text) for text in texts)
            passes.append(time.perf_counter() - started)
        elapsed = sorted(passes)[PASSES // 2]
        rows.append([name, f"{loaded_ms:.0f}", f"{len(texts) / elapsed:,.0f}", f"{megabytes / elapsed:.1f}",
                     f"{total:,}"])
    print("\n" + machine_line(f"Tokenizer speed, {len(texts):,} chunks ({megabytes:.1f} MB) of {root.name}") + "\n")
    print(table(["tokenizer", "load in a fresh process (ms)", "chunks/s", "MB/s", "tokens"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).parents[1], help="the tree whose chunks are counted")
    args = parser.parse_args()
    agreement()
    speed(args.root.resolve())


if __name__ == "__main__":
    main()
