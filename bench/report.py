"""What the development-set benchmarks share around the measurement: options, tables and the details file.

Every script prints Markdown ready to paste into ``docs/benchmarks.md``, with
a line that says when and on what it ran, and can write one JSON line per
case and system (``--details``) so that two runs can be diffed case by case.
The details leave timings out, so that a diff shows only changed answers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO

from common import EMBEDDING, RANKERS, STRATEGIES, Answer, Enhanced, make_ranker
from latency import percentile

from rag_lsp.index.vectors.embedders import DenseConfig
from rag_lsp.languages import language_for_path
from rag_lsp.path_kinds import is_code_path, is_example_path, is_prose_path, is_test_path
from rag_lsp.retrieval.enhance.retrieval_config import FUSION_MODES, FusionConfig
from rag_lsp.retrieval.rank import Ranker
from rag_lsp.retrieval.ranking.config import DEFAULT_RANKING, EVIDENCE_ONLY, STAGES

BENCH_ROOT = Path("/work/benchtrees")
RAG_LSP = "rag_lsp"
DEFAULT_DETAILS = "default"


def add_options(parser: argparse.ArgumentParser, set_name: str) -> None:
    """The options every development-set benchmark takes."""
    parser.add_argument("--mirrors-dir", type=Path, default=Path("/work/.mirror"),
                        help="bare mirrors as MIRRORS/<owner>+<name>/repo")
    parser.add_argument("--trees-dir", type=Path, default=BENCH_ROOT / set_name,
                        help="one tree per repository, moved from commit to commit (keep it outside the project)")
    parser.add_argument("--cache-dir", type=Path, default=BENCH_ROOT / "cache", help="rag_lsp's index cache")
    parser.add_argument("--only", action="append", default=[], metavar="REPO_OR_LANGUAGE",
                        help="measure only these repositories (name or owner/name) or languages; repeatable")
    parser.add_argument("--details", nargs="?", const=DEFAULT_DETAILS, metavar="JSONL",
                        help=f"write every case's ranks as JSON lines (default {BENCH_ROOT}/details/<set>.jsonl)")
    parser.add_argument("--ranker", choices=RANKERS, default="fusion",
                        help="fusion: the default ranker of rag-lsp context; lexical: the previous one")
    parser.add_argument("--disable", action="append", default=[], choices=STRATEGIES, metavar="STRATEGY",
                        help=f"switch a FusionRanker strategy off; repeatable ({', '.join(STRATEGIES)})")
    parser.add_argument("--ablation", action="store_true",
                        help="also measure rag_lsp without each strategy in turn")
    parser.add_argument("--without", action="append", default=[], choices=STAGES, metavar="STAGE",
                        help=f"switch a ranking stage off; repeatable ({', '.join(STAGES)})")
    parser.add_argument("--stage-ablation", action="store_true",
                        help="also measure rag_lsp without each ranking stage in turn, and with the evidence alone")
    parser.add_argument("--signal-ablation", action="store_true",
                        help="also measure rag_lsp with each rerank signal that is on switched off in turn (factor 1)")
    parser.add_argument("--dense", action="append", default=[], metavar="BACKEND[:MODEL]",
                        help="also measure rag_lsp with this embedder (wordllama, model2vec:DIR); repeatable")
    parser.add_argument("--fusion", action="append", default=[], choices=FUSION_MODES,
                        help="fusion modes measured with each --dense (default rrf); repeatable")
    parser.add_argument("--alpha", type=float, default=FusionConfig().alpha, help="the dense weight of rrf")
    parser.add_argument("--describe", action=argparse.BooleanOptionalAction, default=True,
                        help="embed a description line above each chunk's code")
    parser.add_argument("--knobs", action="store_true",
                        help="also measure rag_lsp with expand 0, 2 and 3 and without rerank (no language model)")
    parser.add_argument("--knob", action="append", default=[], metavar="NAME=VALUE",
                        help="also measure rag_lsp with one knob set (expand=0, rerank=false); repeatable")


def details_path(option: str | None, set_name: str) -> Path | None:
    """Where ``--details`` writes: the path given, or the set's default file outside the project."""
    if option is None:
        return None
    return BENCH_ROOT / "details" / f"{set_name}.jsonl" if option == DEFAULT_DETAILS else Path(option)


def selected(only: Sequence[str], *names: str) -> bool:
    """Whether a case of the repository or language ``names`` passes ``--only``."""
    return not only or any(name in only for name in names)


def rag_lsp_systems(args: argparse.Namespace) -> dict[str, Ranker | Enhanced | None]:
    """The rankings of rag_lsp a run measures: the configured one and, for an ablation, each strategy less."""
    disabled = frozenset(args.disable)
    if args.ranker != "fusion":
        if disabled or args.ablation:
            raise SystemExit("--disable and --ablation switch strategies of the fusion ranker only")
        return {f"{RAG_LSP} ({args.ranker} ranker)": make_ranker(args.ranker)}
    config = DEFAULT_RANKING.without(*args.without)
    off = sorted(disabled | set(args.without))
    label = RAG_LSP + (" without " + ", ".join(off) if off else "")
    systems = {label: make_ranker("fusion", disabled, config)}
    for name in STRATEGIES if args.ablation else ():
        if name not in disabled:
            systems[label + (", " if off else " without ") + name] = make_ranker("fusion", disabled | {name}, config)
    for stage in STAGES if args.stage_ablation else ():
        if stage not in args.without:
            systems[label + (", " if off else " without ") + stage + " (stage)"] = make_ranker(
                "fusion", disabled, config.without(stage))
    if args.stage_ablation:
        systems[f"{RAG_LSP}, evidence strategies only"] = make_ranker("fusion", disabled, EVIDENCE_ONLY)
    for signal, factor in config.signals if args.signal_ablation else ():
        if factor != 1.0:
            signals = tuple((name, 1.0 if name == signal else value) for name, value in config.signals)
            systems[label + (", " if off else " without ") + signal + " (signal)"] = make_ranker(
                "fusion", disabled, replace(config, signals=signals))
    for spec in args.dense:
        backend, _, model = spec.partition(":")
        dense = DenseConfig(backend=backend, model=model or None, describe=args.describe)
        for mode in args.fusion or ["rrf"]:
            fusion = replace(FusionConfig(), mode=mode, alpha=args.alpha)
            weight = f" α {args.alpha:g}" if mode == "rrf" else ""
            systems[f"{RAG_LSP} + {backend} ({mode}{weight})"] = Enhanced(dense, fusion)
    knobs = [("expand", 0), ("expand", 2), ("expand", 3), ("rerank", False)] if args.knobs else []
    for spec in args.knob:
        name, _, value = spec.partition("=")
        knobs.append((name, value == "true" if value in ("true", "false") else int(value)))
    for name, value in knobs:
        systems[f"{RAG_LSP}, {name} {str(value).lower()}"] = Enhanced(knobs=((name, value),))
    return systems


@dataclass
class AnswerTally:
    """What rag_lsp's answers looked like: how many were short, cut or out of time, and what came first,
    over all answers and over the misses (the categories of failure the docs report)."""

    asked: int
    answers: int = 0
    short: int = 0
    truncated: int = 0
    out_of_time: int = 0
    misses: int = 0
    first_kinds: Counter = field(default_factory=Counter)
    miss_first_kinds: Counter = field(default_factory=Counter)

    def add(self, answer: Answer, missed: bool) -> None:
        self.answers += 1
        self.short += len(answer.places) < self.asked
        self.truncated += answer.truncated
        self.out_of_time += answer.out_of_time
        kind = place_kind(answer.places[0].path) if answer.places else "empty answer"
        self.first_kinds[kind] += 1
        if missed:
            self.misses += 1
            self.miss_first_kinds[kind] += 1

    def lines(self, miss: str) -> list[str]:
        return [
            (f"- answers with fewer places than the {self.asked} asked: {self.short} of {self.answers}; "
             f"marked truncated (the token budget cut a place, or a strategy hit a limit): {self.truncated}; "
             f"ranked out of time (a strategy skipped for the time budget): {self.out_of_time}"),
            f"- the first place of an answer is in: {counts(self.first_kinds)}",
            f"- {miss}: {self.misses}; their first place is in: {counts(self.miss_first_kinds)}",
        ]


def place_kind(path: str) -> str:
    """What a file of an answer is, for counting what comes first in the misses.

    ``unknown language`` is a file whose language rag_lsp does not know (Haskell, Zig, plain text): the
    path rules call those prose, which would hide that they are the code of such a repository.
    """
    if is_test_path(path):
        return "test"
    if language_for_path(path) == "text":
        return "unknown language"
    if is_prose_path(path):
        return "prose"
    if not is_code_path(path):
        return "settings or data"
    return "example" if is_example_path(path) else "code"


def counts(counter: Counter) -> str:
    """``a 3, b 1`` — most frequent first, ties by name; ``none`` when empty."""
    return ", ".join(f"{key} {n}" for key, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])) if n) or "none"


def machine_line(title: str) -> str:
    """When and on what a run was made: numbers compare only within one run on one machine."""
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    now = datetime.datetime.now().astimezone().isoformat(timespec="minutes")
    return (f"{title} — {now}, {cpu_model()}, {os.cpu_count()} logical cores, load average {load} at the end, "
            f"Python {platform.python_version()}.")


def cpu_model() -> str:
    """The CPU model named in /proc/cpuinfo, or what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def table(header: Sequence[str], rows: Sequence[Sequence[object]], decimals: int = 2) -> str:
    """A Markdown table; floats are printed with ``decimals`` decimals, other values as they are."""
    def cell(value: object) -> str:
        return f"{value:.{decimals}f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def latency_row(label: str, milliseconds: Sequence[float]) -> tuple[str, int, str, str]:
    """A system's warm-query latency: count, median and 95th percentile."""
    if not milliseconds:
        return label, 0, "—", "—"
    return label, len(milliseconds), f"{statistics.median(milliseconds):.1f}", \
        f"{percentile(list(milliseconds), 0.95):.1f}"


def run_footer(latencies: dict[str, Sequence[float]], main_label: str, answers: Sequence[str], wall_s: float,
               indexing_s: float, cache_dir: Path, details: str | None) -> str:
    """What every development-set run prints after its quality tables: each system's latency, what rag_lsp's
    answers looked like (``answers``, one line each), the wall and indexing time, the embedding done, and where
    the details went."""
    lines = ["", "Warm query latency, indexing excluded (ms):", "",
             table(["retriever", "queries", "p50", "p95"], [latency_row(label, ms) for label, ms in latencies.items()]),
             "", f"rag_lsp's answers ({main_label}):", *answers, "",
             f"Wall time {wall_s:.0f} s, of which indexing (refresh with the cache at {cache_dir}) {indexing_s:.0f} s."]
    if EMBEDDING.seconds:
        lines.append(f"Embedding (chunks the vector cache did not have): {EMBEDDING.chunks} chunks in "
                     f"{EMBEDDING.seconds:.0f} s.")
    if details:
        lines.append(f"Details: {details}")
    return "\n".join(lines)


class Details:
    """One JSON line per case and system, in the order measured, keys sorted, no timings."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("w", encoding="utf-8")

    def write(self, record: dict) -> None:
        if self._file is not None:
            self._file.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
