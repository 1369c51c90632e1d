"""Plain data shared by every stage of the core.

These types are deliberately dumb: frozen dataclasses and named tuples with no
behaviour beyond (de)serialisation, so the walk, the parser, the indexes and the
cache can exchange them without knowing about each other. The records made by the
hundred thousand (chunks, definitions, references) are named tuples: a frozen
dataclass sets each field through ``object.__setattr__``, which made building
one about seven times dearer (3.4 against 0.5 µs for a chunk's eleven fields),
and a parse, an edit, a warm start and a question each build thousands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

# Definition kinds that the chunker treats as containers of other definitions.
CLASS_LIKE_KINDS = frozenset(
    {"class", "struct", "interface", "trait", "enum", "module", "impl", "namespace", "union", "type"}
)


class Definition(NamedTuple):
    """A named definition found by a language's tags query.

    Lines are 1-based and inclusive; bytes are 0-based and end-exclusive,
    both over the UTF-8 encoded file content.
    """

    name: str
    qualname: str
    kind: str
    path: str
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    container: str | None = None


class Reference(NamedTuple):
    """A use of a name: a call (``kind="call"``) or another reference."""

    name: str
    path: str
    line: int
    kind: str = "call"


@dataclass(frozen=True, slots=True)
class Import:
    """An import as written in the source (``module`` is the raw module text).

    ``aliases`` are ``(imported, local)`` pairs for names bound under another
    name (``from m import a as b``, ``export {a as b} from "m"``); ``imported``
    is ``*`` when the local name is the module itself (``import m as n``,
    ``import * as ns``), and ``("*", "*")`` marks a wildcard
    (``from m import *``, ``export * from "m"``).
    """

    module: str
    path: str
    line: int
    names: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()


class Chunk(NamedTuple):
    """A retrievable span of one file: a definition, part of one, or top-level code.

    ``blob_id`` is git's object id of the whole file's content, so a chunk can
    be traced to the exact file version it came from.
    """

    path: str
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    symbol: str | None
    qualname: str | None
    kind: str
    language: str
    blob_id: str
    content: str


@dataclass(slots=True)
class ParsedFile:
    """Everything the core learns from one file's content."""

    path: str
    language: str
    blob_id: str
    chunks: list[Chunk] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    # A parse error message; the file was then chunked by line windows.
    error: str | None = None
