"""Definitions of languages without a tree-sitter grammar, found by per-line patterns kept as data.

Swift, Kotlin, PHP, C#, Scala, Lua, Elixir, Haskell, Zig and shell files would
otherwise be 40-line windows that no symbol question can find. Their
declarations are regular expressions in ``rag_lsp/data/declarations.toml``
(see its header); this module matches them line by line, estimates how far
each definition reaches, and hands the finds to ``nesting.resolve`` and the
chunker like the tree-sitter parser does, so a definition's chunk starts at
its declaration with its doc comment, a method belongs to its class and large
definitions are split.

How far a definition reaches is estimated from indentation, which formatted
code in all of these languages follows: the lines after a declaration that
are more indented than it (blank lines included), or are at its indentation
and close it (``}``, ``end``, a ``{`` on its own line), belong to it; the
first other line ends it, unless it continues an expression (starts with
``)`` or ``]``, or another of the language's ``continuations``). Lines inside multi-line comments and strings say nothing.
Good enough, not exact: a body written less
indented than its declaration, or a string the patterns do not recognise as
multi-line, ends a definition early; those lines become top-level code chunks,
so nothing is lost to search.

Matching stays cheap on any input: patterns are tried at the start of a line
only, on its first ``MAX_LINE_CHARS`` characters, and no pattern repeats a
group that itself repeats (``tests/unit/test_declarations.py`` checks the data).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from rag_lsp import languages
from rag_lsp.index.parsing.chunk import CHUNK_KINDS, ChunkContext, chunk_definitions
from rag_lsp.index.parsing.nesting import FoundDefinition, resolve
from rag_lsp.model import Chunk, Definition

# Declarations name what they declare early in the line; the rest is not read.
MAX_LINE_CHARS = 400
_TAB_WIDTH = 4
# Lines that continue an expression (`).ToList();` after a string that ended at column 0):
# however little indented, they end no definition. A language may add its own.
_CONTINUATIONS = r"[)\]]"


@dataclass(frozen=True, slots=True)
class Pattern:
    """One entry of a language's ``declarations``."""

    kind: str
    regex: re.Pattern[str]
    member_only: bool = False
    needs_prefix: bool = False


@dataclass(frozen=True, slots=True)
class LineDeclaration:
    """What one line declares: the pattern that matched, the name and an owner written in the code."""

    pattern: Pattern
    name: str
    container: str | None


@dataclass(frozen=True, slots=True)
class Rules:
    """One language's entry of ``declarations.toml``, compiled."""

    patterns: tuple[Pattern, ...]
    prefix: re.Pattern[str] | None
    keywords: frozenset[str]
    attached: re.Pattern[str] | None
    regions: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...]
    closers: re.Pattern[str] | None
    continuations: re.Pattern[str]
    ignored: re.Pattern[str] | None
    clauses: frozenset[str]

    def declaration(self, text: str) -> LineDeclaration | None:
        """What a line (without its indentation) declares: each pattern, then again after each prefix token."""
        rest = text[:MAX_LINE_CHARS]
        prefixed = False
        while rest:
            for pattern in self.patterns:
                if pattern.needs_prefix and not prefixed:
                    continue
                found = pattern.regex.match(rest)
                if found is None:
                    continue
                name = found.group("name").strip("`")
                if name and name not in self.keywords:
                    return LineDeclaration(pattern, name, found.groupdict().get("container"))
            token = self.prefix.match(rest) if self.prefix else None
            if token is None or not token.end():
                return None
            rest = rest[token.end():].lstrip()
            prefixed = True
        return None


@dataclass(frozen=True, slots=True)
class _Declaration:
    line: int  # 0-based
    indent: int
    found: LineDeclaration

    @property
    def name(self) -> str:
        return self.found.name

    @property
    def kind(self) -> str:
        return self.found.pattern.kind


@cache
def all_rules() -> dict[str, Rules]:
    """Every language's declaration rules, by language name."""
    raw = tomllib.loads(resources.files("rag_lsp").joinpath("data/declarations.toml").read_text("utf-8"))
    return {language: _compile(entry) for language, entry in raw.items()}


def _compile(entry: dict) -> Rules:
    def optional(key: str) -> re.Pattern[str] | None:
        return re.compile(entry[key]) if key in entry else None

    return Rules(
        patterns=tuple(
            Pattern(item["kind"], re.compile(item["regex"]), item.get("member_only", False),
                    item.get("needs_prefix", False))
            for item in entry["declarations"]
        ),
        prefix=optional("prefix"),
        keywords=frozenset(entry.get("keywords", ())),
        attached=optional("attached"),
        regions=tuple((re.compile(opening), re.compile(closing)) for opening, closing in entry.get("regions", ())),
        closers=optional("closers"),
        continuations=re.compile(f"{_CONTINUATIONS}|{entry['continuations']}" if "continuations" in entry
                                 else _CONTINUATIONS),
        ignored=optional("ignored"),
        clauses=frozenset(entry.get("clauses", ())),
    )


def parse_declarations(ctx: ChunkContext) -> tuple[list[Definition], list[Chunk]]:
    """A file's definitions and chunks from its language's declaration patterns."""
    rules = all_rules().get(ctx.language)
    if rules is None:
        raise LookupError(f"no declaration patterns for {ctx.language}")
    lines = [line.rstrip("\r\n") for line in ctx.lines.lines]
    opened_at = _regions(rules, lines)
    code = [
        None if opened_at[number] is not None or (rules.ignored and rules.ignored.match(line.lstrip())) else line
        for number, line in enumerate(lines)
    ]
    indents = [_indent(line) for line in lines]
    matched = [_declaration(rules, line, number, indents[number]) if line is not None else None
               for number, line in enumerate(code)]
    found: list[FoundDefinition] = []
    absorbed: set[int] = set()
    for declaration in matched:
        if declaration is None or declaration.line in absorbed:
            continue
        end = _block_end(rules, code, indents, matched, declaration, absorbed)
        start = _attached_start(rules, lines, opened_at, declaration.line)
        indentation = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        found.append(FoundDefinition(
            name=declaration.name, kind=declaration.kind, container=declaration.found.container,
            extent=(declaration.line, end + 1),
            start_line=start + 1, end_line=end + 1,
            start_byte=ctx.lines.starts[start] + len(indentation.encode("utf-8")),
            end_byte=ctx.lines.starts[end] + len(lines[end].encode("utf-8")),
            signature=lines[declaration.line].strip().rstrip("{").rstrip() if declaration.kind in CHUNK_KINDS else "",
            member_only=declaration.found.pattern.member_only,
        ))
    definitions, spans = resolve(ctx.path, languages.spec(ctx.language), found)
    return definitions, chunk_definitions(ctx, spans)


def _regions(rules: Rules, lines: list[str]) -> list[int | None]:
    """For each line inside a multi-line comment, string or heredoc (after its opening line), where it opened."""
    opened_at: list[int | None] = [None] * len(lines)
    current: tuple[int, re.Pattern[str]] | None = None
    for number, line in enumerate(lines):
        head = line[:MAX_LINE_CHARS]
        if current is not None:
            opened_at[number] = current[0]
            if current[1].search(head):
                current = None
            continue
        current = next(((number, closing) for opening, closing in rules.regions if opening.search(head)), None)
    return opened_at


def _indent(line: str) -> int:
    stripped = line.lstrip()
    return len(line[: len(line) - len(stripped)].expandtabs(_TAB_WIDTH))


def _declaration(rules: Rules, line: str, number: int, indent: int) -> _Declaration | None:
    found = rules.declaration(line.lstrip())
    return _Declaration(number, indent, found) if found is not None else None


def _block_end(rules: Rules, code: list[str | None], indents: list[int], matched: list[_Declaration | None],
               declaration: _Declaration, absorbed: set[int]) -> int:
    """The last line of a declaration's block (see the module docstring); marks the clauses it absorbs.

    Text lines (inside comments and strings) and ignored lines say nothing: they
    belong to the block only when code after them does.
    """
    end = declaration.line
    for number in range(declaration.line + 1, len(code)):
        line = code[number]
        text = line.strip() if line is not None else ""
        if not text:
            continue
        indent = indents[number]
        if indent > declaration.indent or (
                indent == declaration.indent and rules.closers is not None and rules.closers.match(text)):
            end = number
            continue
        if rules.continuations.match(text):
            continue
        other = matched[number]
        if (declaration.kind in rules.clauses and indent == declaration.indent and other is not None
                and (other.name, other.kind) == (declaration.name, declaration.kind)):
            absorbed.add(number)
            end = number
            continue
        break
    return end


def _attached_start(rules: Rules, lines: list[str], opened_at: list[int | None], line: int) -> int:
    """The first line of the comments, annotations and doc regions right above a declaration."""
    start = line
    above = line - 1
    while above >= 0:
        text = lines[above].strip()
        if not text:
            break
        region = opened_at[above]
        if rules.ignored is not None and rules.ignored.match(text):
            pass
        elif region is not None:
            # A doc comment or doc string: it belongs to the declaration if it opens like one.
            if rules.attached is None or not rules.attached.match(lines[region].strip()):
                break
            start = above = region
        elif rules.attached is not None and rules.attached.match(text):
            start = above
        else:
            break
        above -= 1
    return start
