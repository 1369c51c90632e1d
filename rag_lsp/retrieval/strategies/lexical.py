"""Error messages and configuration keys → the places whose text contains them, literally.

An error message is written once in the code, where it is raised; a quoted
message ("Dropped elements in sequence matching") or the message line of a
trace therefore leads straight to the raising definition, and a quoted line
of code to where it is written. Messages carry values filled in at run time,
so each is searched whole and by its fixed fragments (the words between
quoted values and numbers), and only in code: settings, data and prose only
repeat messages. A short quoted message ("unknown currency") is too generic to
search as text, but written as a string literal in code it is as telling as a
long one: it is searched only where it opens a literal. A quoted configuration key such as ``max_line_length`` that
no definition names is found where it is read or set, wherever that is. The
place comes with its enclosing definition: the chunk holding it.
"""

from __future__ import annotations

import re

from rag_lsp.path_kinds import is_code_path, is_primary_path
from rag_lsp.retrieval.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext, specificity

NAME = "lexical"
# A fragment needs this many words and characters to be worth a literal search.
MIN_FRAGMENT_WORDS = 3
MIN_FRAGMENT_CHARS = 12
# Short messages are generic: a message found verbatim is fully specific from this many words on, a fragment
# (the fixed words between run-time values, "object has no attribute") only from more words.
SPECIFIC_MESSAGE_WORDS = 6
SPECIFIC_FRAGMENT_WORDS = 8
MAX_LITERALS = 12
# A short message is searched when it has this many words (and the quotes' 8 characters at least).
MIN_SHORT_WORDS = 2

_QUOTED = re.compile(r"\"([^\"\n]{8,200})\"|“([^”\n]{8,200})”|'([^'\n]{8,200})'|`([^`\n]{8,200})`")
# ``KeyError: 'USD'``, ``error: cannot find value``, ``panic: runtime error``, ``fails with: L031: ...``.
_INTRODUCED = re.compile(
    r"(?:\b[\w.]*(?:Error|Exception|Warning|Failure)|\berror(?:\[\w+\])?|\bfatal|\bpanic|\bFAIL(?:ED)?"
    r"|\bfail(?:s|ed)? with)\s*:\s*(.+)$",
    re.MULTILINE | re.IGNORECASE)
# Values filled in at run time (quoted parts, numbers, hex ids, paths, bracketed parts) and the separators
# that put a code or a column before a message (``L031: ...``, ``L060 | ...``).
_VARIABLE = re.compile(
    r"'[^']*'|\"[^\"]*\"|`[^`]*`|\b0x[0-9a-f]+\b|\b\d[\d.,:]*\b|\S*/\S*|[<{\[(].*?[>}\])]|:\s|\s\|\s")
# A key: words joined by ``_ . - :``, at least two of them.
_KEY = re.compile(r"^[A-Za-z]\w*(?:[_.\-:]+[A-Za-z0-9]\w*)+$")
_QUOTED_WORD = re.compile(r"(['\"])(\w+)\1")
_SPAN = re.compile(r"`([^`\s]{6,80})`|\"([^\"\s]{6,80})\"|'([^'\s]{6,80})'")


def run(ctx: StrategyContext) -> list[Finding]:
    literals = _literals(ctx)
    if not literals:
        raise Skipped("no quoted message or configuration key in the message")
    needles = {needle: kind for kind, searched in literals.values() for needle in searched}
    # A message is raised by code; settings, data and prose only repeat it. A short one counts only where it
    # opens a string literal.
    hits = {needle: [(chunk_id, chunk.path) for chunk_id, chunk in ctx.chunks_containing(needle)
                     if (kind == "config_key" or is_code_path(chunk.path))
                     and (_long_enough(needle) or kind != "raised_message" or _in_literal(chunk.content, needle))]
            for needle, kind in sorted(needles.items())}
    findings = []
    for anchor, (kind, searched) in literals.items():
        in_prose = anchor in ctx.message.prose
        verb = "contains the text" if kind == "raised_message" else "reads or sets the key"
        for needle in searched:
            whole = needle == _whole(anchor)
            found = ctx.capped([(chunk_id, path) for chunk_id, path in hits[needle]
                                if whole or _agrees(ctx.index.chunks[chunk_id].content, needle, anchor)])
            files = {path for _, path in found}
            primary = {path for path in files if is_primary_path(path)}
            weight = RELIABILITY[kind] * specificity(len(primary or files)) * _wording(needle, kind, whole)
            findings.extend(Finding(path=path, strategy=NAME, anchor=anchor, weight=weight, in_prose=in_prose,
                                    reason=f'{verb} "{_short(needle)}"', chunk_id=chunk_id) for chunk_id, path in found)
    return findings


def _literals(ctx: StrategyContext) -> dict[str, tuple[str, list[str]]]:
    """Anchor → (kind, texts to search): messages with their fixed parts, then keys without a definition.

    A message is searched whole (a fixed message is printed verbatim) and by
    its fragments; all of them are one anchor, so a file counts it once.
    """
    text = ctx.query.text
    messages = [m.group(1).strip() for m in _INTRODUCED.finditer(text)]
    messages += [next(filter(None, m.groups())).strip() for m in _QUOTED.finditer(text)]
    literals: dict[str, tuple[str, list[str]]] = {}
    for message in dict.fromkeys(messages):
        whole = _whole(message)
        short = len(whole.split()) >= MIN_SHORT_WORDS
        searched = list(dict.fromkeys(([whole] if _long_enough(whole) or short else []) + _fragments(message)))
        if searched:
            literals[message] = ("raised_message", searched)
    for key in _keys(ctx):
        literals.setdefault(key, ("config_key", [key]))
    return dict(list(literals.items())[:MAX_LITERALS])


def _keys(ctx: StrategyContext) -> list[str]:
    """Quoted or backticked keys of the prose (``max_line_length``, ``log.level``) that no definition names."""
    spans = (next(filter(None, m.groups())) for m in _SPAN.finditer(ctx.message.prose))
    return [span for span in dict.fromkeys(spans)
            if _KEY.match(span) and not span.startswith("__") and not ctx.symbols.definitions(span)]


def _whole(message: str) -> str:
    return message.rstrip(" .!")


def _fragments(message: str) -> list[str]:
    """The runs of a message between its run-time values, long enough to be specific."""
    pieces = (piece.strip(" .,;:!?-=") for piece in _VARIABLE.split(message) if piece)
    return [piece for piece in pieces if _long_enough(piece)]


def _agrees(content: str, fragment: str, message: str) -> bool:
    """Whether the source around a fragment can print the message: a run-time value where the message has one.

    ``raise AttributeError(f"{self} object has no attribute 'parent'")``
    shares a fragment with "'Visitor' object has no attribute 'visit_x'",
    but its literal ``'parent'`` cannot print ``'visit_x'``.
    """
    expected = _QUOTED_WORD.match(message[message.find(fragment) + len(fragment):].lstrip())
    if expected is None:
        return True
    start = content.find(fragment)
    while start != -1:
        written = _QUOTED_WORD.match(content[start + len(fragment):].lstrip())
        if written is None or written.group(2) == expected.group(2):
            return True
        start = content.find(fragment, start + 1)
    return False


def _in_literal(content: str, needle: str) -> bool:
    """Whether ``needle`` opens a string literal somewhere in ``content`` (a quote right before it)."""
    start = content.find(needle)
    while start != -1:
        if start > 0 and content[start - 1] in "\"'`":
            return True
        start = content.find(needle, start + 1)
    return False


def _long_enough(text: str) -> bool:
    return len(text) >= MIN_FRAGMENT_CHARS and len(text.split()) >= MIN_FRAGMENT_WORDS


def _wording(needle: str, kind: str, whole: bool) -> float:
    """How specific a message (or a fragment of one) is by its length; a key is specific by itself."""
    if kind != "raised_message":
        return 1.0
    return min(1.0, len(needle.split()) / (SPECIFIC_MESSAGE_WORDS if whole else SPECIFIC_FRAGMENT_WORDS))


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
