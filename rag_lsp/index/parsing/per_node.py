"""Per-keystroke assembly: a file's definitions, references, imports and chunks, kept per top-level node.

``incremental.py`` hands on what the queries found in each top-level node,
relative to the node, and reuses it while the node's text is unchanged. This
module keeps, next to it, what a full parse would make of those finds: the
definitions with their owners and qualified names (``nesting.resolve``), the
references and imports in order, and the node's chunks. On the next edit an
unchanged node's records are only moved to where the node now is; the rest of
the file is not nested or chunked again.

Why this holds (the result equals a full parse's, which
``tests/unit/test_incremental.py`` checks over random edits of real files in
ten languages):

- Nesting compares byte extents, and every definition lies inside its
  top-level node, so nesting the definitions of each node apart and joining
  the results in node order is nesting them all.
- When no two top-level nodes share a line ("isolated"), references sorted by
  line within each node are sorted across them, and the chunker's root spans
  of different nodes cover different lines. A node's chunks are then a
  function of its spans (relative) and of the text of the lines they cover,
  and are reused whenever that text is the same. Where two nodes share a line
  (``x = 1; y = 2`` in Python, a trailing comment, a one-line JavaScript file)
  references are sorted over the whole file and the whole file is chunked as
  in a full parse.
- Imports are ordered by their statement's byte, which node order keeps.

Decision (2026-12-02): this layer was chosen over re-parsing only the changed
node's text with tree-sitter (a "window"), which needed a proof per edit that
the window parses alone as it does in the file. The window came later
(2026-12-04, ``window_parse.py``): in a valid file an edit between two Python
functions made tree-sitter re-parse the rest of the file, as long as a parse
from scratch. The positions of everything the index keeps are still absolute,
so a line inserted near the top still moves (rebuilds) every record below it:
the lasting fix remains positions relative to their top-level node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from rag_lsp.index.parsing.chunk import (
    ChunkContext,
    Span,
    chunk_definitions,
    code_chunks,
    nest,
    root_chunks,
    sort_chunks,
)
from rag_lsp.index.parsing.incremental import NodeFound, Top
from rag_lsp.index.parsing.nesting import resolve
from rag_lsp.languages import LanguageSpec
from rag_lsp.model import Chunk, Definition, Import, ParsedFile, Reference

# A named tuple (a definition, reference or chunk) made without the Python call its constructor costs: every
# moved node's records are made again on each keystroke.
_new = tuple.__new__

# A chunk relative to the first line its node's chunks cover: line offsets, byte offsets from that line's start,
# symbol, qualified name, kind, content.
_Piece = tuple[int, int, int, int, str | None, str | None, str, str]


@dataclass(slots=True)
class Built:
    """What a full parse makes of one top-level node's finds, with lines relative to the node's start row and
    bytes to its start byte; ``chunks`` is filled when the node is first chunked."""

    definitions: list[Definition]
    spans: list[Span]
    # The line ranges of the node's root spans (``chunk.nest``), relative too.
    roots: list[tuple[int, int]]
    references: list[tuple[str, int, str]]
    imports: list[tuple[str, int, tuple[str, ...], tuple[tuple[str, str], ...]]]
    chunks: _Chunks | None = field(default=None)
    # The records last made from these, and the node's start (row, byte) they were made for: a node above
    # the edit did not move, and its records are handed on as they are (the symbol table then keeps them).
    placed: tuple[int, int, list[Definition], list[Reference], list[Import]] | None = field(default=None)


@dataclass(slots=True)
class _Chunks:
    """A node's chunks and the text of the lines they were made from."""

    text: str
    pieces: list[_Piece]


def assemble(parsed: ParsedFile, ctx: ChunkContext, spec: LanguageSpec, per_node: list[tuple[Top, NodeFound]],
             parsed_nodes: range) -> None:
    """Fill ``parsed`` from what each top-level node yielded, as a full parse of the whole tree would;
    ``parsed_nodes`` holds the positions of the nodes this parse made (``NodeCache.parsed``), the only ones whose
    lines may have changed."""
    path = parsed.path
    definitions: list[Definition] = []
    references: list[Reference] = []
    imports: list[Import] = []
    for node, found in per_node:
        built = found.built = found.built or _build(path, spec, found)
        row, byte = node.start_row, node.start_byte
        placed = built.placed
        if placed is None or placed[0] != row or placed[1] != byte:
            placed = built.placed = (row, byte, [
                _new(Definition, (name, qualname, kind, path, start_line + row, end_line + row, start_byte + byte,
                                  end_byte + byte, container))
                for name, qualname, kind, _, start_line, end_line, start_byte, end_byte, container in built.definitions
            ], [_new(Reference, (name, path, line + row, kind)) for name, line, kind in built.references], [
                Import(module, path, line + row, names, aliases) for module, line, names, aliases in built.imports
            ])
        definitions.extend(placed[2])
        references.extend(placed[3])
        imports.extend(placed[4])
    isolated = all(before.end_row < after.start_row for (before, _), (after, _) in pairwise(per_node))
    if not isolated:
        references = sorted(set(references), key=lambda ref: (ref.line, ref.name, ref.kind))
    parsed.definitions, parsed.references, parsed.imports = definitions, references, imports
    if isolated:
        parsed.chunks = _chunks(ctx, per_node, parsed_nodes)
    else:
        parsed.chunks = chunk_definitions(ctx, [
            _moved(span, node.start_row) for node, found in per_node for span in found.built.spans  # type: ignore[union-attr]
        ])


def _build(path: str, spec: LanguageSpec, found: NodeFound) -> Built:
    definitions, spans = resolve(path, spec, found.definitions)
    references = sorted({(name, line, kind) for name, line, kind, _ in found.references},
                        key=lambda ref: (ref[1], ref[0], ref[2]))
    imports = [(module, line, tuple(sorted(names)), tuple(sorted(aliases)))
               for _, module, line, names, aliases in sorted(found.imports, key=lambda item: (item[0], item[1]))]
    roots = [(span.start_line, span.end_line) for span in nest([_moved(span, 0) for span in spans])]
    return Built(definitions, spans, roots, references, imports)


def _chunks(ctx: ChunkContext, per_node: list[tuple[Top, NodeFound]], parsed_nodes: range) -> list[Chunk]:
    """The file's chunks when no two top-level nodes share a line: each node's, made again only when the
    lines they cover changed, and the leftover top-level code's. Only the nodes at ``parsed_nodes`` can have
    changed lines (a window's; ``window_parse.py``): the others' lines are compared with nothing."""
    covered: list[tuple[int, int]] = []
    made: list[Chunk] = []
    path, language, blob = ctx.path, ctx.language, ctx.blob_id
    for position, (node, found) in enumerate(per_node):
        built = found.built
        assert built is not None
        if not built.roots:
            continue
        row = node.start_row
        first, last = built.roots[0][0] + row, built.roots[-1][1] + row
        covered.extend((start + row, end + row) for start, end in built.roots)
        kept = built.chunks
        text = ctx.lines.slice(first, last) if kept is None or position in parsed_nodes else None
        if text is not None and (kept is None or kept.text != text):
            chunks = root_chunks(ctx, nest([_moved(span, row) for span in built.spans]))
            base = ctx.lines.starts[first - 1]
            built.chunks = _Chunks(text, [
                (c.start_line - first, c.end_line - first, c.start_byte - base, c.end_byte - base, c.symbol,
                 c.qualname, c.kind, c.content) for c in chunks])
            made.extend(chunks)
            continue
        assert kept is not None
        base = ctx.lines.starts[first - 1]
        made.extend([_new(Chunk, (path, first + start, first + end, base + start_byte, base + end_byte, symbol,
                                  qualname, kind, language, blob, content))
                     for start, end, start_byte, end_byte, symbol, qualname, kind, content in kept.pieces])
    return sort_chunks(code_chunks(ctx, covered) + made)


def _moved(span: Span, lines_by: int) -> Span:
    """A fresh copy of a childless span, ``lines_by`` lines further down (nesting fills in children)."""
    return Span(span.start_line + lines_by, span.end_line + lines_by, span.symbol, span.qualname, span.kind,
                span.signature)
