"""The checks and bounds of the arguments a client sends, shared by the language server and the MCP tools.

``ragLsp/*`` params reach pygls handlers as attribute objects or plain dicts, and MCP tool arguments as plain
dicts; both are untrusted JSON. Each check here names the bad field in an ``ArgumentError``, which each
transport turns into its own error (``params.py``: a JSON-RPC InvalidParams; ``mcp_server``: a tool error),
so one limit has one number and one message. Nothing here imports pygls: the MCP server imports it too.
"""

from __future__ import annotations

import re
from typing import TypeGuard

from rag_lsp.retrieval.enhance.knobs import KnobError, KnobValue, knob_map

MAX_QUERY_CHARS = 200_000
MAX_BUDGET_TOKENS = 200_000
MAX_TOP_K = 100
MAX_TIME_BUDGET_MS = 10_000
MAX_SYMBOL_CHARS = 500
# Files a caller may say it already holds, and the longest path it may name.
MAX_KNOWN_FILES = 10_000
MAX_PATH_CHARS = 4096
_OBJECT_ID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


class ArgumentError(ValueError):
    """An argument a client sent that cannot be used; the message names the field and what it must be."""


def field(params: object, name: str, default: object = None) -> object:
    """A field of a params object, whatever shape the transport gave it."""
    if params is None:
        return default
    if isinstance(params, dict):
        return params.get(name, default)
    return getattr(params, name, default)


def natural(value: object) -> TypeGuard[int]:
    """Whether a JSON value is a non-negative integer (``true`` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def integer(params: object, name: str, default: int, upper: int) -> int:
    """A positive integer field up to ``upper``; absent or null means ``default``."""
    value = field(params, name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= upper:
        raise ArgumentError(f"'{name}' must be an integer from 1 to {upper}, got {value!r}")
    return value


def question(params: object, name: str) -> tuple[str, tuple[str, ...]]:
    """The question text (field ``name``) and the ``evidence`` pasted with it, together within
    ``MAX_QUERY_CHARS``; either may be empty (the caller decides whether something else stands in)."""
    query = field(params, name, "")
    if query is None:
        query = ""
    if not isinstance(query, str):
        raise ArgumentError(f"'{name}' must be a string, got {type(query).__name__}")
    evidence = field(params, "evidence", None) or []
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        raise ArgumentError("'evidence' must be a list of strings")
    if len(query) + sum(map(len, evidence)) > MAX_QUERY_CHARS:
        raise ArgumentError(f"{name} and evidence exceed {MAX_QUERY_CHARS} characters")
    return query, tuple(evidence)


def one_of(params: object, name: str, choices: tuple[str, ...], default: str) -> str:
    """A field that must be one of ``choices``; absent means ``default``."""
    value = field(params, name, default)
    if value not in choices:
        raise ArgumentError(f"'{name}' must be one of {', '.join(choices)}, got {value!r}")
    return str(value)


def optional_one_of(params: object, name: str, choices: tuple[str, ...]) -> str | None:
    """A field that, when given (not null), must be one of ``choices``."""
    return None if field(params, name) is None else one_of(params, name, choices, "")


def known_files(params: object, name: str = "known") -> tuple[tuple[str, str], ...]:
    """The files a caller already holds: an object of path (relative to its root, or absolute) → the git blob
    id of the text it holds (40 or 64 lowercase hex digits), in path order."""
    value = field(params, name)
    if value is None:
        return ()
    if not isinstance(value, dict) or len(value) > MAX_KNOWN_FILES:
        raise ArgumentError(f"'{name}' must be an object of at most {MAX_KNOWN_FILES} paths → git blob ids")
    for path, blob in value.items():
        if not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS:
            raise ArgumentError(f"'{name}' keys must be paths of at most {MAX_PATH_CHARS} characters, got {path!r}")
        if not isinstance(blob, str) or not _OBJECT_ID.match(blob):
            raise ArgumentError(f"'{name}' values must be git blob ids (40 or 64 lowercase hex digits), "
                                f"got {blob!r} for {path}")
    return tuple(sorted(value.items()))


def symbol_name(params: object, name: str = "symbol") -> str:
    """A symbol as written in code (``Ledger.post``), stripped: non-empty and at most ``MAX_SYMBOL_CHARS``."""
    symbol = field(params, name, "")
    if not isinstance(symbol, str) or not symbol.strip() or len(symbol) > MAX_SYMBOL_CHARS:
        raise ArgumentError(f"'{name}' must be a non-empty name of at most {MAX_SYMBOL_CHARS} characters,"
                            f" got {symbol!r}")
    return symbol.strip()


def enhancements(params: object, name: str = "enhancements") -> dict[str, KnobValue]:
    """The request's enhancement knobs (``{"expand": 2, "hyde": 1, "rerank": false}``): every key known and of its
    type; a value above the operator's ceiling is clamped later, not refused."""
    try:
        return knob_map(field(params, name), name)
    except KnobError as exc:
        raise ArgumentError(str(exc)) from None
