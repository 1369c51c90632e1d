"""Conversions between LSP's shapes (URIs, positions, typed params) and the core's."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path

from rag_lsp.model import Definition
from rag_lsp.workspace.documents import TextEdit

_SYMBOL_KINDS = {
    "function": types.SymbolKind.Function,
    "method": types.SymbolKind.Method,
    "constructor": types.SymbolKind.Constructor,
    "class": types.SymbolKind.Class,
    "struct": types.SymbolKind.Struct,
    "interface": types.SymbolKind.Interface,
    "trait": types.SymbolKind.Interface,
    "enum": types.SymbolKind.Enum,
    "module": types.SymbolKind.Module,
    "namespace": types.SymbolKind.Namespace,
    "impl": types.SymbolKind.Class,
    "union": types.SymbolKind.Struct,
    "type": types.SymbolKind.TypeParameter,
    "constant": types.SymbolKind.Constant,
    "macro": types.SymbolKind.Function,
}
_ENCODINGS = {
    types.PositionEncodingKind.Utf8: "utf-8",
    types.PositionEncodingKind.Utf16: "utf-16",
    types.PositionEncodingKind.Utf32: "utf-32",
}


def uri_to_path(uri: object) -> Path:
    """An absolute filesystem path for a ``file:`` URI; InvalidParams for anything else."""
    if not isinstance(uri, str) or not uri:
        raise JsonRpcInvalidParams(f"expected a file URI, got {uri!r}")
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise JsonRpcInvalidParams(f"only file: URIs are supported, got {uri!r}")
    return Path(unquote(parsed.path)).resolve()


def path_to_uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def encoding_name(kind: object) -> str:
    """The core's name of a negotiated position encoding; UTF-16, LSP's default, for anything else."""
    return next((name for known, name in _ENCODINGS.items() if kind == known), "utf-16")


def text_edits(changes) -> list[TextEdit | str]:
    """didChange content changes as core edits; a change without a range replaces the whole text."""
    edits: list[TextEdit | str] = []
    for change in changes:
        change_range = getattr(change, "range", None)
        if change_range is None:
            edits.append(change.text)
        else:
            edits.append(TextEdit(change_range.start.line, change_range.start.character,
                                  change_range.end.line, change_range.end.character, change.text))
    return edits


def line_range(start_line: int, end_line: int) -> types.Range:
    """A range covering 1-based inclusive lines (core) as LSP's 0-based, end-exclusive positions."""
    return types.Range(types.Position(max(start_line - 1, 0), 0), types.Position(max(end_line, 1), 0))


def symbol_information(root: Path, definition: Definition) -> types.WorkspaceSymbol:
    return types.WorkspaceSymbol(
        name=definition.name,
        kind=_SYMBOL_KINDS.get(definition.kind, types.SymbolKind.Variable),
        location=types.Location(path_to_uri(root / definition.path),
                                line_range(definition.start_line, definition.end_line)),
        container_name=definition.container,
    )
