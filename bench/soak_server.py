"""The long soak of ``rag-lsp serve``: 10,000 random edits across 50 open documents, with context and completion
questions asked while they arrive, memory sampled; then the answers compared with a fresh index.

    .venv/bin/pip install -e ".[bench]"      # matplotlib, for the plot
    .venv/bin/python bench/soak_server.py --edits 10000 --documents 50 --plot docs/images/soak-memory.png

Uses ``tests/e2e/soak_driver.py``: every edit is a ``didChange`` with the next version, built and applied by
the independent edit model of ``tests/edit_oracle.py``; a question (``ragLsp/context`` and
``ragLsp/completionContext`` at a cursor in the document being edited) goes out every 25 edits. Afterwards
six questions must get the same places, lines, text and scores as a fresh index of the final texts. The
server's resident memory (VmRSS) is sampled every quarter second and plotted against the edits sent.
Prints the figures docs/reliability.md reports; exits 1 when an answer differs or a question went unanswered.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "e2e"), str(HERE.parent / "tests")]

from answers import context_of
from raw_client import RawServer
from soak_driver import QUESTIONS, SoakFigures, comparable, fresh_index, soak

from rag_lsp.retrieval.answer import ContextRequest


def plot(figures: SoakFigures, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    edits = [sent for _, sent, _ in figures.memory]
    rss = [mib for _, _, mib in figures.memory]
    figure, axes = pyplot.subplots(figsize=(8, 3.5), dpi=120)
    axes.plot(edits, rss, linewidth=1.2)
    axes.set_xlabel(f"edits sent (didChange across {figures.documents} open documents)")
    axes.set_ylabel("server resident memory (MiB)")
    axes.set_ylim(0, max(rss) * 1.15)
    axes.set_title(f"rag-lsp serve: {figures.edits:,} edits, {figures.questions:,} questions meanwhile, "
                   f"{figures.seconds:.0f} s")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--edits", type=int, default=10_000)
    parser.add_argument("--documents", type=int, default=50)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--plot", type=Path, help="write the memory curve to this PNG")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rag-lsp-soak-") as workdir:
        work = Path(workdir)
        root = work / "ws"
        root.mkdir()
        with RawServer(work) as server:
            server.initialize([root])
            figures, texts = soak(server, root, args.edits, args.documents, args.seed)
            served = [comparable(server.result("ragLsp/context", {"query": q, "topK": 10})["items"])
                      for q in QUESTIONS]
            exit_code = server.stop()
        fresh = fresh_index(work / "fresh", texts)
        expected = [comparable(context_of(fresh, ContextRequest(q, top_k=10))["items"]) for q in QUESTIONS]
    rss = [mib for _, _, mib in figures.memory]
    quarter = max(1, len(rss) // 4)
    result = {
        "edits": figures.edits, "documents": figures.documents, "seconds": figures.seconds,
        "questions": figures.questions, "answered": figures.answered, "invalid_params": figures.invalid_params,
        "other_errors": len(figures.other_errors), "unanswered": len(figures.unanswered),
        "answers_equal_fresh_index": served == expected, "exit_code": exit_code,
        "rss_mib": {"first": rss[0], "max_first_quarter": max(rss[:quarter]), "max": max(rss), "last": rss[-1],
                    "samples": len(rss)},
    }
    print(json.dumps(result, indent=2))
    if args.plot:
        plot(figures, args.plot)
    ok = result["answers_equal_fresh_index"] and not result["unanswered"] and not result["other_errors"]
    return 0 if ok and exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
