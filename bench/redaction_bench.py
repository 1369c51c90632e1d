"""What masking secrets costs at index time: the secret scan beside parsing, over every file of real trees.

    .venv/bin/python bench/redaction_bench.py /work/benchtrees/perf/Django-5.1.4 /work/benchtrees/semble/fastapi__fastapi

For each tree, every file the walk admits is read once, then (in turns, three
rounds, the fastest of each kept) parsed with ``parse_file`` — which masks the
text first — and scanned with ``redact`` alone. The baseline is parsing in the
same run; the scan's share of it is what the masking adds to a cold index.
Also counts the files where something was masked, so a scan that finds
nothing because it looks nowhere would show.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from report import machine_line, table

from rag_lsp.index.parsing.parse import parse_file
from rag_lsp.index.walk import WalkStats, load, walk
from rag_lsp.redaction import redact

ROUNDS = 3


def texts(root: Path) -> list[tuple[str, str]]:
    """Every file the index would read, as the walk and the content rules admit it."""
    found = []
    for candidate in walk([root], WalkStats()):
        loaded = load(candidate)
        if loaded.text is not None:
            found.append((candidate.path, loaded.text))
    return found


def fastest(run, files: list[tuple[str, str]]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for path, text in files:
            run(path, text)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("trees", type=Path, nargs="+")
    args = parser.parse_args()
    rows = []
    for root in args.trees:
        files = texts(root)
        parse_ms = fastest(lambda path, text: parse_file(path, text), files)
        scan_ms = fastest(lambda path, text: redact(text, path), files)
        masked = sum(redact(text, path) != text for path, text in files)
        megabytes = sum(len(text.encode("utf-8")) for _, text in files) / 2**20
        rows.append([root.name, len(files), f"{megabytes:.1f}", f"{parse_ms:.0f}", f"{scan_ms:.0f}",
                     f"{100 * scan_ms / parse_ms:.0f}%", masked])
    print(machine_line("Masking secrets at index time") + "\n")
    print(table(["tree", "files", "MB", "parse_file ms (masking included)", "redact alone ms",
                 "scan / parse", "files with something masked"], rows))


if __name__ == "__main__":
    main()
