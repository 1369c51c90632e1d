"""What the code around the cursor says, read once per request for every name to be scored against.

A cursor's surroundings tell which names are wanted next: the function being
written (its name, the names in its signature, the parameters it has not used
yet, the type it returns and has not made yet), the class around it, the words
of the code nearby, the call whose arguments are being typed, and the imported
and defined names used just around it. ``read_signals`` gathers them from the
file's ``FileAnalysis`` into one frozen ``Signals``, so that scoring a name
(``scoring.Evidence``) is set arithmetic and every source sees the same view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rag_lsp.completion import weights
from rag_lsp.completion.cursor import (
    CHAIN_PART,
    KEYWORDS,
    FileAnalysis,
    enclosing,
    name_words,
    open_call,
    parameters,
    read_line,
    split_signature,
)
from rag_lsp.index.outline import FUNCTION_KINDS, FileText, signature_end
from rag_lsp.index.terms import tokenize
from rag_lsp.model import CLASS_LIKE_KINDS, Definition


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where completion is asked: a file of a workspace root and a position in it."""

    path: Path
    rel: str
    line: int  # 1-based
    character: int  # code points into the line
    language: str
    typed: str  # the identifier chain just before the cursor (``Hea``, ``params.Fi``, ``self.``)

    def completes(self, name: str) -> bool:
        """Whether ``name`` completes the identifier being typed (the last part of the chain)."""
        typed = self.typed.rsplit(".", 1)[-1]
        return bool(typed) and name.startswith(typed)


@dataclass(frozen=True, slots=True)
class Signals:
    """What the code around one cursor says, whatever name is scored against it."""

    # The innermost function and class around the cursor.
    function: Definition | None
    owner: Definition | None
    # Names in the enclosing function's signature.
    signature_names: frozenset[str]
    # Names in the signature outside its parameters (the type the function returns) that its body has not
    # used yet: what it still has to make.
    result_names: frozenset[str]
    # The words of the parameters not used before the cursor: used nowhere else in the body, or only below
    # the cursor (those words not already in the first set).
    pending_words: frozenset[str]
    later_words: frozenset[str]
    # The words of the code around the cursor that are not imported names (locals, attributes, parameters).
    context_words: frozenset[str]
    # The callee whose argument list holds the cursor (``name``, ``mod.name``), if any.
    open_call: str | None
    # The identifiers on the cursor line, the one being typed excepted (it is not a whole word yet).
    cursor_terms: frozenset[str]
    # The imported and defined names used around the cursor (its line excepted: it is being written).
    companions: frozenset[str]
    # How many imported names each word is part of (``auth`` in Auth, BasicAuth, ...): shared words tell less.
    word_counts: Mapping[str, int]
    # The evidence an unused import gets, shared out when many imports are unused.
    unused_weight: float
    # The identifiers of the lines around the cursor: the names a source may look up.
    names_near: frozenset[str]


def read_signals(analysis: FileAnalysis, cursor: Cursor) -> Signals:
    """The signals of ``cursor`` in the file version ``analysis`` read."""
    around = enclosing(analysis, cursor.line, cursor.character)
    function = next((d for d in reversed(around) if d.kind in FUNCTION_KINDS), None)
    owner = next((d for d in reversed(around) if d.kind in CLASS_LIKE_KINDS), None)
    signature_names: frozenset[str] = frozenset()
    result_names: frozenset[str] = frozenset()
    pending: frozenset[str] = frozenset()
    pending_later: frozenset[str] = frozenset()
    if function is not None:
        signature_names, result_names, pending, pending_later = _read_signature(analysis, cursor, function)
    pending_words = frozenset(tokenize(" ".join(pending)))
    cursor_line = analysis.lines[cursor.line - 1]
    typed_start = cursor.character - len(cursor.typed)
    return Signals(
        function=function,
        owner=owner,
        signature_names=signature_names,
        result_names=result_names,
        pending_words=pending_words,
        later_words=frozenset(tokenize(" ".join(pending_later))) - pending_words,
        context_words=_context_words(analysis, cursor, function),
        open_call=open_call(analysis.lines, cursor.line, cursor.character, weights.OPEN_CALL_LINES),
        cursor_terms=frozenset(CHAIN_PART.findall(cursor_line[:typed_start] + " "
                                                  + cursor_line[cursor.character:])) - KEYWORDS,
        companions=_companions(analysis, cursor),
        word_counts=_word_counts(analysis),
        unused_weight=_unused_weight(analysis),
        names_near=_names_near(analysis, cursor),
    )


def _read_signature(analysis: FileAnalysis, cursor: Cursor, function: Definition
                    ) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """Names in the enclosing function's signature, the result names its body has not used yet, and its
    parameters not used before the cursor: those used nowhere else in the body, those used only below."""
    text = FileText(analysis.lines)
    end = signature_end(text, function, cursor.language)
    header = "\n".join(text.slice(function.start_line, end))
    before: set[str] = set()
    after: set[str] = set()
    for number in range(end + 1, cursor.line):
        before.update(analysis.line_terms[number - 1])
    before.update(CHAIN_PART.findall(analysis.lines[cursor.line - 1][: cursor.character]))
    for number in range(cursor.line + 1, min(function.end_line, len(analysis.lines)) + 1):
        after.update(analysis.line_terms[number - 1])
    unused = [name for name in parameters(header) if name not in before]
    result_names = frozenset(CHAIN_PART.findall(split_signature(header)[1])) - before - {function.name}
    return (frozenset(CHAIN_PART.findall(header)), result_names,
            frozenset(name for name in unused if name not in after),
            frozenset(name for name in unused if name in after))


def _context_words(analysis: FileAnalysis, cursor: Cursor, function: Definition | None) -> frozenset[str]:
    """The words of the code around the cursor, the enclosing function's name included; ``mod.Name``
    chains of an imported module are left out whole: they are uses, not words."""
    low, high = max(cursor.line - weights.NAME_CONTEXT_BEFORE, 1), cursor.line + weights.NAME_CONTEXT_AFTER
    bound = analysis.bindings.names
    words = []
    for line in analysis.lines[low - 1 : high]:
        for keys in read_line(line)[2]:
            if keys[0] not in bound:
                words.extend(keys[-1].split("."))
    if function is not None:
        words.append(function.name)
    return frozenset(tokenize(" ".join(words)))


def _companions(analysis: FileAnalysis, cursor: Cursor) -> frozenset[str]:
    found: set[str] = set()
    for number in range(max(cursor.line - weights.COMPANION_LINES, 1), cursor.line + weights.COMPANION_LINES + 1):
        if number != cursor.line and number <= len(analysis.line_terms):
            found.update(analysis.line_terms[number - 1] & analysis.wanted)
    return frozenset(found)


def _word_counts(analysis: FileAnalysis) -> dict[str, int]:
    counts: dict[str, int] = {}
    for local in analysis.bindings.names:
        for word in name_words(local):
            counts[word] = counts.get(word, 0) + 1
    return counts


def _unused_weight(analysis: FileAnalysis) -> float:
    unused = sum(1 for local in analysis.bindings.names if local not in analysis.uses)
    return weights.UNUSED_IMPORT * min(1.0, weights.UNUSED_SHARED / unused) if unused else weights.UNUSED_IMPORT


def _names_near(analysis: FileAnalysis, cursor: Cursor) -> frozenset[str]:
    low, high = max(cursor.line - weights.CONTEXT_BEFORE, 1), cursor.line + weights.CONTEXT_AFTER
    names = set(CHAIN_PART.findall(analysis.lines[cursor.line - 1]))
    for terms in analysis.line_terms[low - 1 : high]:
        names.update(terms)
    return frozenset(names)
