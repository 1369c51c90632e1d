"""Summary-first: a place as its signature, a docstring preview and, for a class, its members.

Most questions are answered by knowing what a place is before reading how it works: an explanation needs the
signatures and their documentation, a location needs only the name. A summary costs a fraction of the code, so
a bundle can name more places in the same budget; the code itself is shown when the task needs it (debug,
review) or the verbosity asks for it. Signatures are found with ``index/outline.py``'s rules (the header ends at
Python's ``:`` or a brace language's ``{``), over the file text the index's chunks hold, under the index lock.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_lsp import languages
from rag_lsp.index.outline import FUNCTION_KINDS, ChunkedText, FileText, docstring_end, signature_end
from rag_lsp.index.root_index import Index
from rag_lsp.index.store.chunk_layout import LAYOUTS
from rag_lsp.index.store.per_file import PerFile
from rag_lsp.model import CLASS_LIKE_KINDS, Chunk, Definition

DOC_PREVIEW_CHARS = 200
# Files whose text, read from their chunks, is kept between questions (per index).
TEXTS_KEPT = 256
MAX_CHILDREN = 15
# Lines of a place without a definition (a Markdown section, top-level code) that its summary keeps.
HEAD_LINES = 3
_COMMENT_MARKERS = re.compile(r"^\s*(//+!?|#+|--|\*+/?|/\*+!?\*?|<!--|;+)\s?")
_DOC_QUOTES = re.compile(r"""^\s*[rRbBuUfF]{0,2}("{3}|'{3}|"|')|("{3}|'{3}|"|')\s*$""")


def _text(index: Index, path: str) -> FileText:
    """A file's text, its lines read from its chunks as a summary asks for them (``ChunkedText``), or rebuilt
    whole should its chunks overlap."""
    entry = index.files.get(path)
    if entry is None:
        return FileText([])
    layout = LAYOUTS.get(index, path)
    starts, ends, chunks, ids = layout.starts.tolist(), layout.ends.tolist(), index.chunks, layout.ids
    if not ChunkedText.fits(starts, ends):
        return FileText.from_pieces(chunks.pieces_of(list(ids)))
    return ChunkedText(starts, ends, lambda position: chunks.content(ids[position]))


_TEXTS = PerFile(_text, TEXTS_KEPT)


@dataclass(frozen=True, slots=True)
class Summary:
    """A place summarised: the text shown, the whole docstring it previews (empty without one), and the
    definition it is of (None for top-level code and prose)."""

    text: str
    docstring: str
    definition: Definition | None


class Summariser:
    """Summaries of the places of one index; call under ``index.lock``. File texts rebuilt from the chunks are
    kept across questions (``TEXTS_KEPT`` files per index, each while it is unchanged): a bundle summarises a
    few hundred places in a few dozen files, and the next question mostly the same ones."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def text_of(self, path: str) -> FileText:
        return _TEXTS.get(self.index, path)

    def definition_of(self, chunk: Chunk) -> Definition | None:
        """The definition a chunk shows (the innermost of its qualified name around its first line)."""
        if not chunk.qualname:
            return None
        around = [d for d in self.index.symbols.in_file(chunk.path)
                  if d.qualname == chunk.qualname and d.start_line <= chunk.start_line <= d.end_line]
        return max(around, key=lambda d: (d.start_line, -d.end_line, d.qualname), default=None)

    def members_of(self, definition: Definition) -> list[Definition]:
        if definition.kind not in CLASS_LIKE_KINDS:
            return []
        return sorted((d for d in self.index.symbols.in_file(definition.path)
                       if d.container == definition.qualname or d.qualname == f"{definition.qualname}.{d.name}"),
                      key=lambda d: (d.start_line, d.name))

    def summarise(self, chunk: Chunk) -> Summary:
        definition = self.definition_of(chunk)
        comment = languages.spec(chunk.language).comment
        if definition is None or definition.kind not in CLASS_LIKE_KINDS | FUNCTION_KINDS:
            lines = [line for line in chunk.content.splitlines() if line.strip()][:HEAD_LINES]
            return Summary(_preview_lines(lines), "", definition)
        text = self.text_of(definition.path)
        header_end = signature_end(text, definition, chunk.language)
        start = _first_code_line(text, definition.start_line, header_end, comment)
        signature = text.slice(start, header_end)
        indent = _indent_of(text.line(header_end)) + "    "
        if chunk.language == "python" and (doc_end := docstring_end(text, header_end, definition.end_line)):
            docstring = _collapse(text.slice(header_end + 1, doc_end), quotes=True)
            lines = [*signature, f'{indent}"""{_preview(docstring)}"""'] if docstring else list(signature)
        else:
            docstring = _collapse(text.slice(definition.start_line, start - 1), quotes=False)
            lines = ([f"{_indent_of(text.line(start))}{comment} {_preview(docstring)}"] if docstring else []) \
                + list(signature)
        lines += _children(self.members_of(definition), indent, comment)
        return Summary("\n".join(lines).rstrip(), docstring, definition)


def _children(members: Sequence[Definition], indent: str, comment: str) -> list[str]:
    shown = [f"{indent}{comment} {member.kind} {member.name} (line {member.start_line})"
             for member in members[:MAX_CHILDREN]]
    if len(members) > MAX_CHILDREN:
        shown.append(f"{indent}{comment} ... and {len(members) - MAX_CHILDREN} more")
    return shown


def _first_code_line(text: FileText, start: int, end: int, comment: str) -> int:
    """The first line of a definition that is neither a comment, a decorator nor an attribute (its
    signature's first); ``comment`` is the language's line-comment prefix."""
    markers = (comment, "/*", "*") if comment == "//" else (comment,)
    for number in range(start, end + 1):
        stripped = text.line(number).strip()
        if stripped and not stripped.startswith((*markers, "@", "#[")):
            return number
    return start


def _collapse(lines: Sequence[str], quotes: bool) -> str:
    """Documentation lines as one line of words, without comment markers or docstring quotes."""
    words = []
    for line in lines:
        if not quotes and line.strip().startswith(("@", "#[")):
            continue
        line = _DOC_QUOTES.sub("", line) if quotes else _COMMENT_MARKERS.sub("", line)
        line = line.strip().rstrip("*/").strip()
        if line:
            words.append(line)
    return " ".join(" ".join(words).split())


def _preview(text: str) -> str:
    return text if len(text) <= DOC_PREVIEW_CHARS else text[:DOC_PREVIEW_CHARS].rstrip() + "…"


def _preview_lines(lines: Sequence[str]) -> str:
    return "\n".join(line if len(line) <= DOC_PREVIEW_CHARS else _preview(line) for line in lines)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
