"""A file's lines read from its chunks as they are asked for (``ChunkedText``) are the lines ``FileText`` rebuilds
from all of them at once."""

import random

from conftest import write_tree

from rag_lsp.index.outline import ChunkedText, FileText
from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.bundle import summaries


def pieces_of(rng: random.Random) -> list[tuple[int, int, str]]:
    """Chunks in line order without overlapping, some with a repeated signature before their own lines, some
    with fewer lines than their span, with gaps (blank lines in no chunk) between them."""
    pieces, line = [], 1
    for number in range(rng.randint(0, 12)):
        line += rng.randint(0, 3)
        span = rng.randint(1, 6)
        own = [f"line {line + offset} of piece {number}" for offset in range(span)]
        if rng.random() < 0.3:
            own = ["def repeated_signature():", *own]
        if rng.random() < 0.2:
            own = own[: rng.randint(1, span)]
        pieces.append((line, line + span - 1, "\n".join(own)))
        line += span
    return pieces


def test_lines_read_as_asked_are_the_lines_rebuilt_at_once():
    rng = random.Random(11)
    for _ in range(300):
        pieces = pieces_of(rng)
        starts, ends = [start for start, _, _ in pieces], [end for _, end, _ in pieces]
        assert ChunkedText.fits(starts, ends)
        read: list[int] = []

        def reader(position: int, pieces=pieces, read=read) -> str:
            read.append(position)
            return pieces[position][2]

        whole, lazy = FileText.from_pieces(pieces), ChunkedText(starts, ends, reader)
        assert len(lazy) == len(whole)
        for number in range(-1, len(whole) + 3):
            assert lazy.line(number) == whole.line(number)
        for start, end in ((0, 5), (3, 9), (len(whole) - 2, len(whole) + 4), (7, 2)):
            assert lazy.slice(start, end) == whole.slice(start, end)
        # Each chunk is read once, however many of its lines are asked for.
        assert len(read) == len(set(read))
    assert not ChunkedText.fits([1, 5], [6, 9]) and not ChunkedText.fits([5, 1], [6, 3])


def test_a_summary_reads_the_files_lines_from_its_chunks(tmp_path):
    methods = "".join(f"    def step_{n}(self):\n        return {n}\n\n" for n in range(40))
    source = f'class Ledger:\n    """Keeps the books."""\n\n{methods}'
    index = Index(write_tree(tmp_path / "ws", {"shop/ledger.py": source}), use_cache=False)
    index.refresh()
    entry = index.files["shop/ledger.py"]
    text = summaries._text(index, "shop/ledger.py")
    assert isinstance(text, ChunkedText)
    whole = FileText.from_pieces(index.chunks.pieces_of(list(entry.chunk_ids)))
    assert [text.line(n) for n in range(len(whole) + 2)] == [whole.line(n) for n in range(len(whole) + 2)]
