"""An independent model of LSP text edits, used as the oracle in edit property tests.

It converts positions by encoding a line to UTF-16 and slicing the code
units, a different route from the implementation's character walk.
"""

from __future__ import annotations

import random
import re

LINE_BREAK = re.compile(r"\r\n|\r|\n")
ALPHABET = ["a", "b", "x", "_", " ", "(", ")", ":", "\n", "\r\n", "é", "ß", "中", "🎉", "𝔘", "def ", "class ",
            "return ", "    ", "#", "'", '"', "=", "1"]


def split_lines(text: str) -> list[tuple[int, str]]:
    """(start index, line content without break) for every line."""
    starts = [0, *(m.end() for m in LINE_BREAK.finditer(text))]
    lines = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        lines.append((start, LINE_BREAK.sub("", text[start:end])))
    return lines


def to_index(text: str, line: int, character: int) -> int:
    start, content = split_lines(text)[line]
    units = content.encode("utf-16-le")[: character * 2]
    return start + len(units.decode("utf-16-le"))


def apply(text: str, edit: tuple[int, int, int, int, str]) -> str:
    sl, sc, el, ec, new = edit
    return text[: to_index(text, sl, sc)] + new + text[to_index(text, el, ec):]


def random_position(rng: random.Random, text: str) -> tuple[int, int]:
    """A position at a character boundary (never inside a surrogate pair)."""
    lines = split_lines(text)
    line = rng.randrange(len(lines))
    content = lines[line][1]
    boundaries = [0]
    for char in content:
        boundaries.append(boundaries[-1] + (2 if ord(char) > 0xFFFF else 1))
    return line, rng.choice(boundaries)


def random_edit(rng: random.Random, text: str) -> tuple[int, int, int, int, str]:
    start = random_position(rng, text)
    end = random_position(rng, text)
    if end < start or rng.random() < 0.5:
        end = start
    new = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 6)))
    return (*start, *end, new)
