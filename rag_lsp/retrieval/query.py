"""Read a question for what to search: BM25 terms and code-like names.

A code-like name is one a developer would not write in plain prose:
backticked text, ``Member.access``, ``Type::method``, a call ``name(``,
``snake_case`` and ``camelCase``/``PascalCase`` identifiers. Those are looked
up as symbols; every word, code-like or not, also feeds BM25.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag_lsp.index.terms import tokenize

_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
# A backticked span that is one word, as file names are (``ku``, ``out_forward``, ``en-gb``).
_ONE_WORD = re.compile(r"[A-Za-z_][\w-]*")
_QUALIFIED = re.compile(r"\b[A-Za-z_][\w]*(?:(?:\.|::|#)[A-Za-z_][\w]*)+")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")
_SNAKE = re.compile(r"^_*[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+_*$")
_CAMEL = re.compile(r"^_*[A-Za-z][a-z0-9]*[A-Z]\w*$")
_NAME_IN_CODE = re.compile(r"[A-Za-z_][\w.:#]*")
# A question that is one identifier, possibly qualified (``Logger``, ``Sinatra::Base``, ``field_validator``): a
# name to look up whatever its case, since nobody asks a one-word question in prose.
_ONE_NAME = re.compile(r"^\s*`?([A-Za-z_$][\w$]*(?:(?:\.|::|#|->|\\)[A-Za-z_$][\w$]*)*)`?\s*$")
# A capitalised word after the first word of a sentence: prose capitalises type and module names
# ("how Application boots the Server"), so it is a name worth looking up.
_PROSE_LINE = 300
_PROPER = re.compile(r"(?<=[a-z,;:)]\s)([A-Z][a-z0-9]+[A-Za-z0-9]*)\b")
# A name that could be a word of prose (`fix`, `Dataset`): weighed by how rare the word is in the code.
PLAIN_WORD = re.compile(r"^[A-Za-z][a-z]+$")
# File names such as ``config.py`` look qualified but are paths.
_FILE_SUFFIX = re.compile(
    r"\.(py|pyi|js|jsx|ts|tsx|mjs|cjs|go|rs|java|kt|c|h|cc|cpp|hpp|rb|cs|php|md|rst|txt|json|ya?ml|toml|cfg|ini|html|css|sh|lock)$"
)


@dataclass(frozen=True, slots=True)
class Query:
    """A question as the rankers see it."""

    text: str
    terms: tuple[str, ...]
    # Code-like names in order of first appearance, without duplicates.
    names: tuple[str, ...]
    # Plain words that may also name a symbol (``Ledger``, ``settings``).
    words: tuple[str, ...]
    # Backticked spans that are one word: the writer marked them as code, so each names something, a symbol
    # or else a module (the ``ku`` locale).
    backticked: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.terms and not self.names


def parse_query(text: str) -> Query:
    """Terms for BM25 plus the names worth looking up as symbols."""
    names: list[str] = []
    if one := _ONE_NAME.match(text):
        names.append(one.group(1).replace("->", ".").replace("\\", "."))
    backticked = [match.group(1) for match in _BACKTICKED.finditer(text)]
    for span in backticked:
        names.extend(_NAME_IN_CODE.findall(span))
    names.extend(m.group(0) for m in _QUALIFIED.finditer(text) if not _FILE_SUFFIX.search(m.group(0)))
    names.extend(m.group(1) for m in _CALL.finditer(text))
    identifiers = _IDENTIFIER.findall(text)
    names.extend(i for i in identifiers if _SNAKE.match(i) or _CAMEL.match(i))
    names.extend(m.group(1) for line in text.splitlines() if len(line) < _PROSE_LINE for m in _PROPER.finditer(line))
    cleaned = [n.strip(".:#") for n in names if not _FILE_SUFFIX.search(n)]
    # A word already inside a code-like name is not looked up again on its own.
    in_names = {part for name in cleaned for part in re.split(r"\.|::|#", name)}
    words = [i for i in identifiers if len(i) >= 3 and i not in in_names and tokenize(i)]
    return Query(
        text=text,
        terms=tuple(tokenize(text)),
        names=tuple(dict.fromkeys(n for n in cleaned if n)),
        words=tuple(dict.fromkeys(words)),
        backticked=tuple(dict.fromkeys(span for span in backticked if _ONE_WORD.fullmatch(span))),
    )
