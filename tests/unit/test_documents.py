"""Open documents apply LSP edits exactly, in every position encoding, and keep a correct tree."""

import random

import pytest
from edit_oracle import apply, random_edit
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lsp.index.parsing.narrowing import Reparsed
from rag_lsp.index.parsing.parse import parse_tree
from rag_lsp.workspace.documents import EditError, OpenDocument, TextEdit

START = 'x = "é🎉"\r\n\r\ndef f(a):\r\n    return a  # 中文\r\n\nclass C:\n    pass\n'


def test_utf16_positions_count_surrogate_pairs():
    document = OpenDocument("a.py", START, 1)
    # Line 0 is: x = "é🎉"  — the emoji takes two UTF-16 units (characters 6 and 7).
    document.apply(TextEdit(0, 8, 0, 8, "!"))
    assert document.text.startswith('x = "é🎉!"\r\n')


@pytest.mark.parametrize("encoding, character", [("utf-8", 7), ("utf-32", 6)])
def test_other_position_encodings(encoding, character):
    document = OpenDocument("a.py", START, 1, encoding=encoding)
    document.apply(TextEdit(0, character, 0, character, "!"))
    assert document.text.startswith('x = "é!🎉"')


def test_crlf_lines_are_counted_once():
    document = OpenDocument("a.py", START, 1)
    document.apply(TextEdit(3, 0, 3, 4, ""))
    assert "\r\nreturn a  # 中文\r\n" in document.text


@pytest.mark.parametrize("edit", [TextEdit(99, 0, 99, 0, "x"), TextEdit(0, 50, 0, 50, "x"), TextEdit(2, 3, 1, 0, "")])
def test_edits_that_do_not_fit_raise_a_clear_error(edit):
    document = OpenDocument("a.py", START, 1)
    with pytest.raises(EditError):
        document.apply(edit)
    assert document.text == START


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_edits_match_the_oracle_and_a_fresh_parse(seed):
    rng = random.Random(seed)
    document = OpenDocument("a.py", START, 1)
    expected = START
    for _ in range(40):
        edit = random_edit(rng, expected)
        expected = apply(expected, edit)
        document.apply(TextEdit(*edit))
        if rng.random() < 0.3:
            document.reparse()
    assert document.text == expected
    incremental = document.reparse()
    whole = incremental.tree if isinstance(incremental, Reparsed) else incremental
    fresh = parse_tree("python", expected.encode("utf-8"))
    assert whole is not None and str(whole.root_node) == str(fresh.root_node)
