"""Reading the file under the cursor for completion: where names are used, what encloses the cursor.

Everything here is per line and memoised by line text, because the file
under the cursor changes with every keystroke but only a line at a time.
Positions are 1-based lines and code-point columns.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

from rag_lsp.index.bindings import FileBindings, file_bindings
from rag_lsp.index.outline import FUNCTION_KINDS, FileText, signature_end
from rag_lsp.index.terms import tokenize
from rag_lsp.model import Definition

# An identifier, and a dotted chain of them (``self.client.send``).
CHAIN_PART = re.compile(r"[A-Za-z_$][\w$]*")
CHAIN = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
# What is being typed at the end of a line's prefix (``Hea``, ``params.Fi``, ``self.``).
TYPED = re.compile(r"([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\.?)$")
# The callee before an opening parenthesis.
CALLEE = re.compile(r"([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*$")
LINE_BREAK = re.compile(r"\r\n|\r|\n")
RECEIVERS = frozenset({"self", "this", "cls"})
# Keywords and receivers of the common languages: they make any two lines look alike.
KEYWORDS = frozenset("""
    and as assert async await break case catch class const continue def default del elif else except export
    extends false finally for from function if import in is lambda let new none not null or pass raise return
    self this throw true try typeof undefined var while with yield None True False cls
""".split())


@dataclass(slots=True)
class FileAnalysis:
    """What one version of the cursor's file says, whatever the cursor."""

    lines: list[str]
    bindings: FileBindings
    import_lines: frozenset[int]
    # Name (or dotted chain ``a.b``) → 1-based lines where it is used, imports excluded.
    uses: dict[str, list[int]]
    definitions: list[Definition]
    # Lines of function signatures: a name used there annotates, it is not called.
    signature_lines: frozenset[int]
    # Each line's identifiers, keywords left out (for comparing the code around two places).
    line_terms: list[frozenset[str]]
    # The names whose uses are kept: imported, defined in the file, members of a receiver.
    wanted: frozenset[str] = frozenset()


# An analysis is patched rather than redone when at most this many lines changed (and none came or went).
MAX_PATCHED_LINES = 32


def analyse(index, rel: str, lines: list[str], language: str,
            previous: FileAnalysis | None = None) -> FileAnalysis:
    """What one version of a file says for completion (call under ``index.lock``).

    ``previous`` is an analysis of an earlier version of the same file: when
    only a few lines changed in place (typing within lines), its uses are
    patched instead of reading every line again.
    """
    imports = index.imports.get(rel, [])
    bindings = file_bindings(imports, language)
    definitions = index.symbols.in_file(rel)
    import_lines: set[int] = set()
    for item in imports:
        import_lines.update(statement_lines(lines, item.line))
    wanted = frozenset({name.split(".", 1)[0] for name in bindings.names} | {d.name for d in definitions})
    patched = _patch(previous, lines, frozenset(import_lines), wanted) if previous is not None else None
    signature_lines = None
    if previous is not None and patched is not None:
        uses, line_terms, changed = patched
        # The signatures stand when no definition moved and no changed line is in one.
        if previous.definitions == definitions and previous.signature_lines.isdisjoint(changed):
            signature_lines = previous.signature_lines
    else:
        uses, line_terms = _read_uses(lines, frozenset(import_lines), wanted)
    if signature_lines is None:
        signature_lines = _signature_lines(lines, definitions, language)
    return FileAnalysis(lines, bindings, frozenset(import_lines), uses, definitions, signature_lines, line_terms,
                        wanted)


def _signature_lines(lines: list[str], definitions: list[Definition], language: str) -> frozenset[int]:
    """The lines of every function's signature."""
    text = FileText(lines)
    found: set[int] = set()
    for definition in definitions:
        if definition.kind in FUNCTION_KINDS:
            found.update(range(definition.start_line, signature_end(text, definition, language) + 1))
    return frozenset(found)


def _line_keys(line: str, wanted: frozenset[str]) -> list[str]:
    """The use keys of one line: ``a``, ``a.b``, ``a.b.c`` for a wanted ``a``; ``m`` for ``self.m``."""
    _, firsts, chains = read_line(line)
    if firsts.isdisjoint(wanted) and firsts.isdisjoint(RECEIVERS):
        return []
    keys = []
    for chain in chains:
        first = chain[0]
        if first in RECEIVERS:
            if len(chain) > 1:
                keys.append(chain[1])
        elif first in wanted:
            keys.extend(chain)
    return list(dict.fromkeys(keys))


def _read_uses(lines: list[str], import_lines: frozenset[int],
               wanted: frozenset[str]) -> tuple[dict[str, list[int]], list[frozenset[str]]]:
    uses: dict[str, list[int]] = {}
    line_terms: list[frozenset[str]] = []
    empty = frozenset()
    watched = wanted | RECEIVERS
    for number, line in enumerate(lines, 1):
        if number in import_lines:
            line_terms.append(empty)
            continue
        terms, firsts, _ = read_line(line)
        line_terms.append(terms)
        if firsts.isdisjoint(watched):
            continue
        for key in _line_keys(line, wanted):
            uses.setdefault(key, []).append(number)
    return uses, line_terms


def _patch(previous: FileAnalysis, lines: list[str], import_lines: frozenset[int],
           wanted: frozenset[str]) -> tuple[dict[str, list[int]], list[frozenset[str]], list[int]] | None:
    """``previous``'s uses and line terms updated for a few lines changed in place (and those lines),
    or None."""
    if (len(previous.lines) != len(lines) or previous.import_lines != import_lines
            or previous.wanted != wanted):
        return None
    changed = [number for number, (old, new) in enumerate(zip(previous.lines, lines), 1) if old != new]
    if len(changed) > MAX_PATCHED_LINES:
        return None
    uses = {key: list(found) for key, found in previous.uses.items()}
    line_terms = list(previous.line_terms)
    for number in changed:
        if number in import_lines:
            continue
        for key in _line_keys(previous.lines[number - 1], wanted):
            found = uses.get(key)
            if found:
                position = bisect_left(found, number)
                if position < len(found) and found[position] == number:
                    del found[position]
                if not found:
                    del uses[key]
        line = lines[number - 1]
        line_terms[number - 1] = read_line(line)[0]
        for key in _line_keys(line, wanted):
            found = uses.setdefault(key, [])
            position = bisect_left(found, number)
            if position == len(found) or found[position] != number:
                found.insert(position, number)
    return uses, line_terms, changed


# Line text → what ``_read_line`` found: files change a line at a time, so most lines are known.
_MEMO: dict[str, tuple[frozenset[str], frozenset[str], tuple[tuple[str, ...], ...]]] = {}
_MEMO_LIMIT = 1 << 18


def read_line(line: str) -> tuple[frozenset[str], frozenset[str], tuple[tuple[str, ...], ...]]:
    """A line's identifiers (keywords left out), the first identifiers of its dotted chains, and per chain
    its first one to three segments (``a``, ``a.b``, ``a.b.c``)."""
    found = _MEMO.get(line)
    if found is None:
        chains = []
        for chain in CHAIN.findall(line):
            parts = chain.split(".", 3)
            chains.append(tuple(".".join(parts[:length]) for length in range(1, min(len(parts), 3) + 1)))
        found = (frozenset(CHAIN_PART.findall(line)) - KEYWORDS, frozenset(keys[0] for keys in chains),
                 tuple(chains))
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[line] = found
    return found


def statement_lines(lines: list[str], start: int) -> range:
    """The lines of a statement starting at a 1-based line: until its brackets close."""
    depth = 0
    number = start
    while number <= len(lines):
        line = lines[number - 1]
        depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")
        if depth <= 0 and not line.rstrip().endswith("\\"):
            break
        number += 1
    return range(start, min(number, len(lines)) + 1)


def enclosing(analysis: FileAnalysis, line: int, character: int) -> list[Definition]:
    """Definitions around a cursor (1-based line, code point), outermost first.

    A definition being written often ends, for the parser, before the cursor
    (``def f():`` followed by an indented blank line is an error node): one
    whose header is less indented than the cursor, with nothing but deeper or
    blank lines in between, still holds it. The cursor's depth is its line's
    indentation, or on a line of spaces its column; an empty line has not been
    indented yet, so it is as deep as the editor would indent it (see
    ``expected_indent``).
    """
    lines = analysis.lines
    cursor_line = lines[line - 1]
    if cursor_line.strip():
        depth = indent(cursor_line)
    else:
        depth = character if cursor_line else expected_indent(lines, line)
    found = []
    for definition in analysis.definitions:
        if definition.start_line > line:
            continue
        if line <= definition.end_line:
            found.append(definition)
            continue
        header = indent(lines[definition.start_line - 1])
        if depth > header and all(not text.strip() or indent(text) > header
                                  for text in lines[definition.end_line : line - 1]):
            found.append(definition)
    return sorted(found, key=lambda d: (d.start_line, -d.end_line))


def open_call(lines: list[str], line: int, character: int, look_back: int = 3) -> str | None:
    """The callee (``name``, ``mod.name``) whose argument list holds a cursor, looking a few lines back."""
    before = lines[max(line - 1 - look_back, 0) : line - 1]
    text = "\n".join([*before, lines[line - 1][:character]])
    found = open_callee(text)
    return found[0] if found else None


def open_callee(text: str) -> tuple[str, int] | None:
    """The callee whose argument list is still open at the end of ``text``, and where it starts in ``text``."""
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        char = text[index]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth == 0:
                if char != "(":
                    return None
                match = CALLEE.search(text, 0, index)
                return (match.group(1), match.start(1)) if match else None
            depth -= 1
    return None


def code_point(line: str, character: int, encoding: str) -> int | None:
    """The index into ``line`` of a position counted in ``encoding`` units (``utf-8``, ``utf-16``,
    ``utf-32``), or None past the line's end; a position inside a character counts as its end."""
    if encoding == "utf-32":
        return character if character <= len(line) else None
    counted = 0
    for index, char in enumerate(line):
        if counted >= character:
            return index
        if encoding == "utf-16":
            counted += 2 if ord(char) > 0xFFFF else 1
        else:
            counted += len(char.encode("utf-8", "surrogatepass"))
    return len(line) if counted >= character else None


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def expected_indent(lines: list[str], line: int) -> int:
    """How deep the code of an empty 1-based line is: as the last non-blank line above, deeper when that
    line opens a block (ends with ``:``, ``{``, ``(`` or ``[``; one column more, only the comparison
    counts), as an editor indents a new line; but never deeper than the next non-blank line below,
    since code that goes on shallower there has closed the blocks above."""
    depth = 0
    for text in reversed(lines[: line - 1]):
        stripped = text.rstrip()
        if stripped:
            depth = indent(text) + (1 if stripped.endswith((":", "{", "(", "[")) else 0)
            break
    below = next((indent(text) for text in lines[line:] if text.strip()), None)
    return depth if below is None else min(depth, below)


def split_lines(text: str) -> list[str]:
    """Lines as LSP counts them (``\n``, ``\r\n`` and ``\r`` end a line)."""
    return LINE_BREAK.split(text) if "\r" in text else text.split("\n")


@lru_cache(maxsize=16384)
def name_words(name: str) -> frozenset[str]:
    """The words of an identifier (``TooManyRedirects`` → too, many, redirects), short ones dropped."""
    return frozenset({t for t in tokenize(name) if t != name.lower() and len(t) > 2} or {name.lower()})


def split_signature(header: str) -> tuple[str, str]:
    """A signature's parameter list (the first bracketed group's inside) and the rest around it: the
    name and, depending on the language, the result type before or after the parameters."""
    opening = header.find("(")
    if opening < 0:
        return "", header
    depth = 0
    for index in range(opening + 1, len(header)):
        char = header[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return header[opening + 1 : index], header[:opening] + " " + header[index + 1 :]
            depth -= 1
    return header[opening + 1 :], header[:opening]


def parameters(header: str) -> list[str]:
    """Parameter names of a signature (``def f(self, a: int, *, b=1)`` → a, b), receivers left out."""
    inside, _ = split_signature(header)
    depth, part, parts = 0, [], []
    for char in inside:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(part))
            part = []
            continue
        part.append(char)
    parts.append("".join(part))
    names = []
    for piece in parts:
        words = CHAIN_PART.findall(piece.split("=", 1)[0].split(":", 1)[0])
        if words and words[-1] not in RECEIVERS:
            names.append(words[-1])
    return names
