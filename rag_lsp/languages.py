"""Language registry: which language a path is, and its tree-sitter grammar and queries.

All per-language facts live in ``rag_lsp/data/languages.toml`` and the
``rag_lsp/queries/<language>/*.scm`` files; this module only loads them (and
evaluates the two query predicates tree-sitter leaves to its caller).
Grammars and queries are loaded lazily and cached, because loading all of
them costs tens of milliseconds that a one-language workspace should not pay.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Literal

from tree_sitter import Language, Node, Query, QueryCursor

from rag_lsp.model import CLASS_LIKE_KINDS

QUERY_KINDS = ("tags", "imports")
# Languages a reader reads as documents rather than code, settings or data.
PROSE_LANGUAGES = frozenset({"markdown", "text"})
# The suffix of a template the build fills in (``config.h.in``, ``bat.1.in``).
_TEMPLATE_SUFFIX = ".in"
_INHERITS = "; inherits:"
DEFAULT_METHOD_OWNERS = CLASS_LIKE_KINDS - {"namespace", "module"}
# What may begin or end a token running over several lines in most grammars (``languages.toml``, delimiters).
DEFAULT_DELIMITERS = re.compile(rb"/\*|\*/|[\"'`#%\\]|<<|^=(?:begin|end)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """Static facts about one language, as read from ``languages.toml``."""

    name: str
    extensions: tuple[str, ...]
    filenames: tuple[str, ...]
    comment: str
    chunker: str
    grammar: str | None = None
    comments: frozenset[str] = frozenset()
    wrappers: frozenset[str] = frozenset()
    # Definition kinds whose member functions are methods; a function in a
    # namespace or (most languages') module stays a function.
    method_owners: frozenset[str] = DEFAULT_METHOD_OWNERS
    # Languages whose code uses each other's definitions share a family (JavaScript and TypeScript).
    family: str = ""
    # What may begin or end a token running over several lines (``languages.toml``).
    delimiters: re.Pattern[bytes] = DEFAULT_DELIMITERS

    @property
    def has_grammar(self) -> bool:
        return self.grammar is not None


@cache
def all_languages() -> dict[str, LanguageSpec]:
    """Every known language by name, in the order of the data file."""
    raw = tomllib.loads(resources.files("rag_lsp").joinpath("data/languages.toml").read_text("utf-8"))
    return {
        name: LanguageSpec(
            name=name,
            extensions=tuple(entry.get("extensions", ())),
            filenames=tuple(entry.get("filenames", ())),
            comment=entry.get("comment", "#"),
            chunker=entry.get("chunker", "lines"),
            grammar=entry.get("grammar"),
            comments=frozenset(entry.get("comments", ())),
            wrappers=frozenset(entry.get("wrappers", ())),
            method_owners=frozenset(entry.get("method_owners", DEFAULT_METHOD_OWNERS)),
            family=entry.get("family", name),
            delimiters=re.compile(entry["delimiters"].encode(), re.MULTILINE) if "delimiters" in entry
            else DEFAULT_DELIMITERS,
        )
        for name, entry in raw.items()
    }


@lru_cache(maxsize=1 << 17)
def family_for_path(path: str) -> str:
    """The family of a path's language (its own name unless ``languages.toml`` groups it): code may use the
    definitions of its family (remembered: a popular name's uses are thousands of paths)."""
    return spec(language_for_path(path)).family


@cache
def _suffix_table() -> tuple[dict[str, str], dict[str, str]]:
    by_suffix: dict[str, str] = {}
    by_name: dict[str, str] = {}
    for spec in all_languages().values():
        for ext in spec.extensions:
            by_suffix.setdefault(ext, spec.name)
        for filename in spec.filenames:
            by_name.setdefault(filename, spec.name)
    return by_suffix, by_name


@lru_cache(maxsize=1 << 17)
def language_for_path(path: str) -> str:
    """The language of a path by exact file name, then by suffix; ``"other"`` if unknown (remembered: ranking
    asks it for the same paths on every question)."""
    name = path.rsplit("/", 1)[-1]
    by_suffix, by_name = _suffix_table()
    if name in by_name:
        return by_name[name]
    lowered = name.lower()
    # Longest suffix first, so ".env.example" wins over ".example".
    dot = lowered.find(".", 1)
    if dot == -1:
        # Without a suffix: a dotfile (``.gitignore``, ``.editorconfig``) holds a tool's settings, and a name in
        # capitals (``README``, ``AUTHORS``, ``NOTICE``) is a document.
        if name.startswith("."):
            return "ini"
        if name.isupper():
            return "text"
    # A document's template (a man page ``bat.1.in``) is still that document; other templates are the build's.
    if lowered.endswith(_TEMPLATE_SUFFIX) and lowered != _TEMPLATE_SUFFIX:
        filled = language_for_path(name[: -len(_TEMPLATE_SUFFIX)])
        if filled in PROSE_LANGUAGES:
            return filled
    while dot != -1:
        language = by_suffix.get(lowered[dot:])
        if language:
            return language
        dot = lowered.find(".", dot + 1)
    return "other"


def spec(language: str) -> LanguageSpec:
    return all_languages().get(language) or all_languages()["other"]


@cache
def ts_language(language: str) -> Language | None:
    """The tree-sitter ``Language`` for a language, or None if it has no grammar."""
    grammar = spec(language).grammar
    if not grammar:
        return None
    module_name, _, function = grammar.partition(":")
    module = importlib.import_module(module_name)
    return Language(getattr(module, function)())


def query_source(language: str, kind: str) -> str | None:
    """The text of ``queries/<language>/<kind>.scm``, or None when the file is absent.

    A first line ``; inherits: a, b`` prepends those languages' queries of the
    same kind, so a grammar that extends another (TSX over TypeScript) keeps
    only its own patterns. A name starting with ``_`` is a fragment, not a
    language: ``queries/_ecmascript/tags.scm`` holds the patterns JavaScript and
    TypeScript share, and every language that inherits it must compile it.
    """
    resource = resources.files("rag_lsp").joinpath(f"queries/{language}/{kind}.scm")
    if not resource.is_file():
        return None
    text = resource.read_text("utf-8")
    first_line = text.split("\n", 1)[0]
    if not first_line.startswith(_INHERITS):
        return text
    parents = [name.strip() for name in first_line[len(_INHERITS):].split(",") if name.strip()]
    return "\n".join([*(query_source(parent, kind) or "" for parent in parents), text])


@cache
def extraction_query(language: str) -> tuple[Query, int] | None:
    """A language's ``tags`` and ``imports`` queries compiled as one, and how many of its patterns are the tags'
    (those come first): a cursor then walks the tree once for both, which on Django's Python files takes 0.55 s
    where the two queries took 0.90. None for a language with neither."""
    lang = ts_language(language)
    tags = query_source(language, "tags")
    sources = [source for source in (tags, query_source(language, "imports")) if source]
    if lang is None or not sources:
        return None
    query = Query(lang, "\n".join(sources))
    # The tags' patterns are those that begin inside their source: counted on the one query, not by compiling the
    # tags' alone as well (C++'s takes 0.3 s, in every process that parses it).
    end = len(tags.encode("utf-8")) if tags else 0
    return query, sum(1 for pattern in range(query.pattern_count) if query.start_byte_for_pattern(pattern) < end)


def query_matches(query: Query, node: Node, byte_range: tuple[int, int] | None = None
                  ) -> list[tuple[int, dict[str, list[Node]]]]:
    """``QueryCursor.matches`` with rag_lsp's query predicates evaluated (only matches overlapping
    ``byte_range`` when one is given).

    tree-sitter evaluates ``#eq?``, ``#match?``, ``#any-of?`` and their
    negations itself and hands every other predicate to a callback; without
    one it ignores them, so every cursor over our queries goes through here.
    """
    cursor = QueryCursor(query)
    if byte_range is not None:
        cursor.set_byte_range(*byte_range)
    return cursor.matches(node, _query_predicate)


def _kind_eq(nodes: list[Node], types: frozenset[str]) -> bool:
    return all(node.type in types for node in nodes)


def _has_parent(nodes: list[Node], types: frozenset[str]) -> bool:
    return all(node.parent is not None and node.parent.type in types for node in nodes)


# Names and meaning as in Neovim's queries: ``(#kind-eq? @capture "type" ...)``
# holds when the captured node is of one of the types, ``(#has-parent? @capture
# "type" ...)`` when its parent is. They let one pattern stand for several
# that differ only in a node type (a constant at the top level or exported),
# and a type list may name types one grammar lacks (TypeScript's
# ``as_expression`` in JavaScript), where a node pattern would not compile.
QUERY_PREDICATES = {"kind-eq?": _kind_eq, "has-parent?": _has_parent}


def _query_predicate(predicate: str, args: list[tuple[str, Literal["capture", "string"]]], pattern_index: int,
                     captures: dict[str, list[Node]]) -> bool:
    """Evaluate one of ``QUERY_PREDICATES``; an unknown predicate matches nothing, so a typo shows in the fixtures."""
    check = QUERY_PREDICATES.get(predicate)
    if check is None or not args or args[0][1] != "capture":
        return False
    types = frozenset(value for value, kind in args[1:] if kind == "string")
    return check(captures.get(args[0][0], []), types)


def parsed_languages() -> list[str]:
    """Languages parsed with tree-sitter (those that have a grammar)."""
    return [name for name, s in all_languages().items() if s.has_grammar]
