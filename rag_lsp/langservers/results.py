"""Server answers → ``Place``s and hover text, validated.

A language server is an external program of any version, so its answers are
checked for shape rather than trusted: a result that does not fit the LSP
types raises ``ServerCallError("malformed", ...)`` naming the method and the
first bad part, and the caller keeps the server running. Results outside the
workspace root (standard libraries, dependencies, non-file URIs) are dropped,
because rag_lsp only returns context it can show from the workspace.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard
from urllib.parse import urlsplit
from urllib.request import url2pathname

# LSP SymbolKind 1..26, lowercase; the two-word kinds in snake_case like the core's kinds.
SYMBOL_KINDS = (
    "file", "module", "namespace", "package", "class", "method", "property", "field", "constructor", "enum",
    "interface", "function", "variable", "constant", "string", "number", "boolean", "array", "object", "key",
    "null", "enum_member", "struct", "event", "operator", "type_parameter",
)  # fmt: skip

# (relative path, 0-based line, character in the negotiated encoding) → character in code points.
Convert = Callable[[str, int, int], int]


class ServerCallError(Exception):
    """A call to a language server failed.

    ``kind`` is ``"timeout"``, ``"error"`` (a JSON-RPC error response),
    ``"malformed"`` (a result of the wrong shape) or ``"crashed"`` (the process
    died during the call); ``str()`` is one line naming the method.
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Place:
    """A range in a workspace file: 1-based lines, 0-based code point characters, path relative to the root."""

    path: str
    start_line: int
    start_character: int
    end_line: int
    end_character: int
    name: str | None = None
    kind: str | None = None
    container: str | None = None


class _Result:
    """The context of one answer: which method it is (for messages), where the root is, how to convert."""

    def __init__(self, method: str, root: Path, convert: Convert):
        self.method = method
        self.roots = (Path(os.path.normpath(root.absolute())), root.resolve())
        self.convert = convert

    def malformed(self, what: str, value: Any) -> ServerCallError:
        return ServerCallError("malformed", f"{self.method}: {what}: {value!r:.120}")

    def relative(self, uri: Any) -> str | None:
        """The root-relative posix path of a ``file:`` URI, or None for other schemes and outside paths."""
        if not isinstance(uri, str):
            raise self.malformed("uri is not a string", uri)
        parts = urlsplit(uri)
        if parts.scheme != "file":
            return None
        path = Path(os.path.normpath(url2pathname(parts.path)))
        for root in self.roots:
            if path.is_relative_to(root):
                return path.relative_to(root).as_posix()
        resolved = path.resolve()
        if resolved.is_relative_to(self.roots[1]):
            return resolved.relative_to(self.roots[1]).as_posix()
        return None

    def position(self, value: Any) -> tuple[int, int]:
        if not isinstance(value, dict):
            raise self.malformed("position is not an object", value)
        line, character = value.get("line"), value.get("character")
        if not (_natural(line) and _natural(character)):
            raise self.malformed("position needs non-negative integer line and character", value)
        return line, character

    def span(self, range_: Any) -> tuple[int, int, int, int]:
        """A validated range as (start line, start units, end line, end units), all 0-based."""
        if not isinstance(range_, dict):
            raise self.malformed("range is not an object", range_)
        return (*self.position(range_.get("start")), *self.position(range_.get("end")))

    def place(self, path: str, span: tuple[int, int, int, int], **symbol: str | None) -> Place:
        start_line, start_units, end_line, end_units = span
        return Place(
            path,
            start_line + 1,
            self.convert(path, start_line, start_units),
            end_line + 1,
            self.convert(path, end_line, end_units),
            **symbol,
        )

    def symbol_fields(self, item: dict) -> dict[str, str | None]:
        name, kind, container = item.get("name"), item.get("kind"), item.get("containerName")
        if not isinstance(name, str):
            raise self.malformed("symbol without a string name", item)
        if not _natural(kind):
            raise self.malformed("symbol kind is not an integer", kind)
        if container is not None and not isinstance(container, str):
            raise self.malformed("containerName is not a string", container)
        return {"name": name, "kind": SYMBOL_KINDS[kind - 1] if 1 <= kind <= len(SYMBOL_KINDS) else None,
                "container": container or None}  # fmt: skip


def _natural(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _items(result: _Result, raw: Any) -> list:
    """``null`` → [], one object → [it], a list → itself; anything else is malformed."""
    if raw is None:
        return []
    if isinstance(raw, dict):
        return [raw]
    if isinstance(raw, list):
        return raw
    raise result.malformed("expected an object, a list or null", raw)


def locations(method: str, raw: Any, root: Path, convert: Convert) -> list[Place]:
    """``Location | Location[] | LocationLink[] | null`` → places inside the root.

    A ``LocationLink`` contributes its ``targetSelectionRange`` (the name), which
    is what a plain ``Location`` from definition or references points at.
    """
    result = _Result(method, root, convert)
    places = []
    for item in _items(result, raw):
        if not isinstance(item, dict):
            raise result.malformed("location is not an object", item)
        if "targetUri" in item:
            uri, range_ = item["targetUri"], item.get("targetSelectionRange", item.get("targetRange"))
        else:
            uri, range_ = item.get("uri"), item.get("range")
        # The shape is checked before a result is dropped: a malformed answer is malformed wherever it points.
        span = result.span(range_)
        path = result.relative(uri)
        if path is not None:
            places.append(result.place(path, span))
    return places


def document_symbols(method: str, raw: Any, path: str, root: Path, convert: Convert) -> list[Place]:
    """``DocumentSymbol[]`` flattened depth-first (container = the parent's name) or ``SymbolInformation[]``.

    A symbol's place is its whole ``range`` (the definition with its body), not
    its ``selectionRange``, because context retrieval wants the definition.
    """
    result = _Result(method, root, convert)
    places = []
    for item in _items(result, raw):
        if isinstance(item, dict) and "location" in item:
            place = _symbol_information(result, item)
            if place is not None:
                places.append(place)
        else:
            places.extend(_document_symbol_tree(result, item, path, None))
    return places


def _document_symbol_tree(result: _Result, item: Any, path: str, parent: str | None) -> Iterator[Place]:
    if not isinstance(item, dict):
        raise result.malformed("document symbol is not an object", item)
    fields = result.symbol_fields(item)
    fields["container"] = parent
    yield result.place(path, result.span(item.get("range")), **fields)
    children = item.get("children") or []
    if not isinstance(children, list):
        raise result.malformed("children is not a list", children)
    for child in children:
        yield from _document_symbol_tree(result, child, path, fields["name"])


def _symbol_information(result: _Result, item: dict) -> Place | None:
    """One ``SymbolInformation`` or ``WorkspaceSymbol``; None outside the root.

    A ``WorkspaceSymbol`` whose location has no range (servers send those only
    to clients that resolve them lazily, which rag_lsp does not declare) is
    skipped rather than guessed.
    """
    fields = result.symbol_fields(item)
    location = item["location"]
    if not isinstance(location, dict):
        raise result.malformed("symbol location is not an object", location)
    span = result.span(location["range"]) if "range" in location else None
    path = result.relative(location.get("uri"))
    if path is None or span is None:
        return None
    return result.place(path, span, **fields)


def workspace_symbols(method: str, raw: Any, root: Path, convert: Convert) -> list[Place]:
    """``SymbolInformation[] | WorkspaceSymbol[] | null`` → places inside the root."""
    result = _Result(method, root, convert)
    places = []
    for item in _items(result, raw):
        if not isinstance(item, dict) or "location" not in item:
            raise result.malformed("workspace symbol without a location", item)
        place = _symbol_information(result, item)
        if place is not None:
            places.append(place)
    return places


def hover_text(method: str, raw: Any) -> str | None:
    """The text of a ``Hover``: ``MarkupContent``, a ``MarkedString`` or a list of them; None when empty.

    Markdown is returned as written: its markup is readable as text, and
    stripping it would need a Markdown parser for little gain.
    """
    if raw is None:
        return None
    if not isinstance(raw, dict) or "contents" not in raw:
        raise ServerCallError("malformed", f"{method}: hover without contents: {raw!r:.120}")
    contents = raw["contents"]
    parts = contents if isinstance(contents, list) else [contents]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("value"), str):
            texts.append(part["value"])
        else:
            raise ServerCallError("malformed", f"{method}: unreadable hover contents: {part!r:.120}")
    text = "\n\n".join(t.strip() for t in texts if t.strip())
    return text or None
