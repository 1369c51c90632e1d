"""Parse one file into definitions, references, imports and chunks.

Per-language knowledge lives in the ``queries/<language>/{tags,imports}.scm``
files (languages without a grammar: ``data/declarations.toml``, read by
``declarations.py``); this module only interprets their captures:

- ``@definition.<kind>`` on a definition node, with ``@name`` on its name and
  optionally ``@container`` naming its owner when the owner is not an
  enclosing node (Go receivers, C++ ``Foo::bar`` definitions);
- ``@reference.<kind>`` on a use, with ``@name`` on the used name;
- ``@import`` on an import statement, ``@import.module`` on the module text,
  ``@import.name`` on each imported name and ``@import.alias`` on the local
  name it is bound to when that differs (see ``Import.aliases``).

Architecture invariant: parsing never raises. A file whose grammar or query
fails is chunked by line windows and the failure is reported in
``ParsedFile.error``.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass

from tree_sitter import Node, Parser, Tree

from rag_lsp import languages
from rag_lsp.index.parsing.chunk import (
    CHUNK_KINDS,
    ChunkContext,
    FileLines,
    chunk_definitions,
    chunk_headings,
    chunk_lines,
)
from rag_lsp.index.parsing.declarations import parse_declarations
from rag_lsp.index.parsing.incremental import Found, NodeCache
from rag_lsp.index.parsing.narrowing import Reparsed
from rag_lsp.index.parsing.nesting import FoundDefinition, resolve
from rag_lsp.index.parsing.per_node import assemble
from rag_lsp.index.parsing.window_parse import Window
from rag_lsp.model import Import, ParsedFile, Reference
from rag_lsp.redaction import find_secrets, redact

# Signatures repeated at the head of split chunks are capped at this many lines.
MAX_SIGNATURE_LINES = 5
_QUOTES = "\"'`<>"


def blob_id(data: bytes) -> str:
    """Git's object id for file content (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def parse_tree(language: str, source: bytes, old_tree: Tree | None = None) -> Tree | None:
    """A tree-sitter tree for ``source``, reusing ``old_tree`` after ``Tree.edit`` when given."""
    ts_language = languages.ts_language(language)
    if ts_language is None:
        return None
    parser = Parser(ts_language)
    return parser.parse(source, old_tree) if old_tree is not None else parser.parse(source)


def parse_file(path: str, text: str, *, language: str | None = None, data: bytes | None = None,
               blob: str | None = None, tree: Tree | Window | Reparsed | None = None,
               reuse: NodeCache | None = None) -> ParsedFile:
    """Everything rag_lsp indexes about one file.

    ``data`` is the raw content as on disk (for the blob id); it defaults to
    ``text`` encoded as UTF-8. ``blob`` is that blob id when the caller has it
    already (a refresh computes it to look the file up in the cache), and then
    the raw content is not needed. ``tree`` lets a caller that parses
    incrementally pass the tree it already has (masking secrets keeps every
    byte offset, so a tree of the unmasked text still fits); ``reuse`` is what
    the last parse of the same buffer found per top-level node
    (``incremental.py``): the queries then run only over the nodes that changed,
    and what unchanged nodes yielded is moved rather than made again (``per_node.py``).
    ``tree`` may instead be a ``Window`` planned on ``reuse`` (``window_parse.py``):
    only the nodes it parsed are looked at, and the text is known to hold no
    secret; a window planned on another parse is dropped for a parse from scratch.
    ``tree`` may also be a ``Reparsed`` (``narrowing.py``): the whole buffer re-parsed
    from the tree ``reuse`` was last filled from.
    """
    language = language or languages.language_for_path(path)
    if blob is None:
        blob = blob_id(data if data is not None else text.encode("utf-8"))
    parsed = ParsedFile(path=path, language=language, blob_id=blob)
    if isinstance(tree, Window) and (reuse is None or tree.generation != reuse.generation):
        tree = None
    spec = languages.spec(language)
    # Secrets are masked before anything is chunked or indexed; lines and byte offsets stay as they were. A
    # buffer whose last parse held none is masked only if the lines of the nodes queried again hold one: the
    # others' lines are unchanged, and the detectors look at one line at a time.
    changed_only = reuse is not None and reuse.clean and tree is not None and spec.chunker == "tree" and spec.has_grammar
    masked = text if isinstance(tree, Window) or changed_only else redact(text, path)
    clean, text = masked is text, masked
    ctx = ChunkContext(path, language, parsed.blob_id, spec.comment, FileLines(text))
    try:
        if spec.chunker == "tree" and spec.has_grammar:
            source = text.encode("utf-8")
            _parse_with_tree(parsed, ctx, source, tree, reuse)
            if changed_only and reuse is not None and _holds_secret(source, reuse.queried_ranges, path):
                reuse.clear()
                return parse_file(path, text, language=language, blob=blob, tree=tree, reuse=reuse)
            if reuse is not None:
                reuse.clean = clean
        elif spec.chunker == "declarations":
            parsed.definitions, parsed.chunks = parse_declarations(ctx)
        elif spec.chunker == "headings":
            parsed.chunks = chunk_headings(ctx)
        else:
            parsed.chunks = chunk_lines(ctx)
    except Exception as exc:  # noqa: BLE001 - the invariant is that parsing never raises.
        if reuse is not None:
            reuse.clear()
        if changed_only:
            # The lines of a file that failed to parse are indexed, masked.
            return parse_file(path, text, language=language, blob=blob, reuse=reuse)
        parsed.error = f"{type(exc).__name__}: {exc}"
        parsed.definitions, parsed.references, parsed.imports = [], [], []
        parsed.chunks = _safe_lines(ctx)
    return parsed


def _holds_secret(source: bytes, ranges: list[tuple[int, int]], path: str) -> bool:
    """Whether the lines holding any of the byte ranges hold a secret."""
    lines = []
    for start, end in ranges:
        begin = source.rfind(b"\n", 0, start) + 1
        stop = source.find(b"\n", end)
        lines.append(source[begin : stop if stop >= 0 else len(source)].decode("utf-8", "replace"))
    return bool(lines) and bool(find_secrets("\n".join(lines), path))


def _safe_lines(ctx: ChunkContext) -> list:
    try:
        return chunk_lines(ctx)
    except Exception:  # noqa: BLE001 - last resort: an unchunkable file is simply empty.
        return []


def _parse_with_tree(parsed: ParsedFile, ctx: ChunkContext, source: bytes, tree: Tree | Window | Reparsed | None,
                     reuse: NodeCache | None) -> None:
    window = tree if isinstance(tree, Window) else None
    if isinstance(tree, (Window, Reparsed)):
        whole: Tree | None = tree.tree
    else:
        whole = tree or parse_tree(parsed.language, source)
    if whole is None:
        raise RuntimeError(f"no grammar for {parsed.language}")
    extractor = _Extractor(parsed, ctx, source)
    if reuse is not None:
        per_node = reuse.extract(parsed.path, parsed.language, whole.root_node, source, extractor.extract, window,
                                 tree if isinstance(tree, Reparsed) else whole)
        assemble(parsed, ctx, extractor.spec, per_node, reuse.parsed)
        return
    found = extractor.extract(whole.root_node, None)
    parsed.definitions, spans = resolve(parsed.path, extractor.spec, found.definitions)
    parsed.references = [Reference(name, parsed.path, line, kind) for name, line, kind in found.sorted_references()]
    parsed.imports = [Import(module, parsed.path, line, names, aliases)
                      for _, module, line, names, aliases in found.sorted_imports()]
    parsed.chunks = chunk_definitions(ctx, spans)


@dataclass(slots=True)
class _RawDefinition:
    node: Node
    name: str
    kind: str
    container: str | None


class _Extractor:
    """Runs one file's queries and turns captures into found definitions, references and imports."""

    def __init__(self, parsed: ParsedFile, ctx: ChunkContext, source: bytes) -> None:
        self.parsed = parsed
        self.ctx = ctx
        self.source = source
        self.spec = languages.spec(parsed.language)

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def name(self, node: Node) -> str:
        """A node's text as a name: interned, so that every file's ``get`` or ``self`` is one string. A parse
        worker's payload keeps them interned (``cache.encode``: marshal marks them, and reading interns them
        again), so a cold index holds one copy of each name instead of one per use: nineteen copies of Django
        held some 120 MB more of definitions after a cold index than after a warm start."""
        return sys.intern(self.text(node))

    def extract(self, root: Node, ranges: list[tuple[int, int]] | None) -> Found:
        """What the queries find in the whole tree, or in the nodes overlapping the byte ranges."""
        found = Found()
        # One definition per node and name over all the ranges: a match overlapping two ranges is met twice.
        raw: dict[tuple[int, int, str], _RawDefinition] = {}
        query = languages.extraction_query(self.parsed.language)
        if query is not None:
            compiled, tag_patterns = query
            for byte_range in ranges if ranges is not None else [None]:
                for pattern, captures in languages.query_matches(compiled, root, byte_range):
                    if pattern < tag_patterns:
                        self._tag(captures, found, raw)
                    else:
                        self._import(captures, found)
        for item in raw.values():
            start_node = self._extended_start(item.node)
            found.definitions.append(FoundDefinition(
                name=item.name, kind=item.kind, container=item.container,
                extent=(item.node.start_byte, item.node.end_byte),
                start_line=start_node.start_point[0] + 1, end_line=_end_line(item.node),
                start_byte=start_node.start_byte, end_byte=item.node.end_byte,
                signature=self._signature(item.node) if item.kind in CHUNK_KINDS else "",
            ))
        return found

    def _tag(self, captures: dict[str, list[Node]], found: Found,
             raw: dict[tuple[int, int, str], _RawDefinition]) -> None:
        """One match of a ``tags`` pattern: a definition (kept once per node and name) or a reference."""
        names = captures.get("name")
        if not names:
            return
        name = self.name(names[0])
        for capture, nodes in captures.items():
            if capture.startswith("definition."):
                node = nodes[0]
                container = captures.get("container")
                key = (node.start_byte, node.end_byte, name)
                raw.setdefault(key, _RawDefinition(
                    node, name, sys.intern(capture.removeprefix("definition.")),
                    sys.intern(_clean_container(self.text(container[0]))) if container else None,
                ))
            elif capture.startswith("reference."):
                kind = sys.intern(capture.removeprefix("reference."))
                found.references.add((name, names[0].start_point[0] + 1, kind, names[0].start_byte))

    def _extended_start(self, node: Node) -> Node:
        """The node where a definition's chunk starts: wrappers, then attached comments."""
        while node.parent is not None and node.parent.type in self.spec.wrappers:
            node = node.parent
        start = node
        previous = node.prev_sibling
        if previous is None and node.parent is not None:
            # Some grammars put a body's first comment before the body node
            # (Ruby's class bodies): it still documents the first definition.
            previous = node.parent.prev_sibling
        while (
            previous is not None
            and previous.type in self.spec.comments
            and previous.end_point[0] >= start.start_point[0] - 1
            and self._starts_line(previous)
        ):
            start = previous
            previous = previous.prev_sibling
        return start

    def _starts_line(self, node: Node) -> bool:
        """True when only whitespace precedes the node on its line (not a trailing comment)."""
        line_start = self.source.rfind(b"\n", 0, node.start_byte) + 1
        return not self.source[line_start : node.start_byte].strip()

    def _signature(self, node: Node) -> str:
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        text = self.source[node.start_byte : end].decode("utf-8", "replace").rstrip()
        lines = text.splitlines()[:MAX_SIGNATURE_LINES]
        return "\n".join(lines).rstrip("{").rstrip()

    def _import(self, captures: dict[str, list[Node]], found: Found) -> None:
        """One match of an ``imports`` pattern: its statement's modules, with the names and aliases it binds."""
        statements, modules = captures.get("import"), captures.get("import.module")
        if not statements or not modules:
            return
        line = statements[0].start_point[0] + 1
        names = [self.name(n) for n in captures.get("import.name", ())]
        aliases = [self.name(n) for n in captures.get("import.alias", ())]
        for module_node in modules:
            module = sys.intern(self.text(module_node).strip(_QUOTES))
            entry = found.imports.setdefault((statements[0].start_byte, module), (line, set(), set()))
            entry[1].update(names)
            entry[2].update(_alias_pairs(names, aliases))


def _alias_pairs(names: list[str], aliases: list[str]) -> list[tuple[str, str]]:
    """``(imported, local)`` pairs of one match: an alias pairs with the match's name, else with ``*``."""
    if not aliases:
        return []
    if len(names) == len(aliases):
        return list(zip(names, aliases))
    return [("*", alias) for alias in aliases]


def _end_line(node: Node) -> int:
    """1-based last line of a node; a node ending at column 0 ends on the line before."""
    row, column = node.end_point
    return row if column == 0 and row > node.start_point[0] else row + 1


def _clean_container(text: str) -> str:
    """A receiver or scope as written (``*Server``, ``Vec<T>``, ``ns::Foo``) reduced to its name."""
    text = text.strip().lstrip("*&").strip()
    for bracket in "<[(":
        text = text.split(bracket, 1)[0]
    return text.replace("::", ".").strip(". ")

