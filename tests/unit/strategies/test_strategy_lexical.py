"""The lexical strategy: quoted messages and configuration keys found literally, with their definition."""

from __future__ import annotations

import pytest
from strategy_helpers import chunk_name, context_for, heaviest

from rag_lsp.retrieval.strategies import lexical
from rag_lsp.retrieval.strategies.base import Skipped

REPO = {
    "src/sqlfluff/core/parser/helpers.py": '''def check_still_complete(segments_in, matched_segments, unmatched):
    """Check that the segments in are the same as the segments out."""
    initial_str = "".join(s.raw for s in segments_in)
    current_str = "".join(s.raw for s in matched_segments + unmatched)
    if initial_str != current_str:
        raise RuntimeError(
            "Dropped elements in sequence matching! {!r} != {!r}".format(initial_str, current_str)
        )
    return True
''',
    "src/sqlfluff/rules/L031.py": '''class Rule_L031:
    """Avoid table aliases in from clauses and join conditions."""

    def _eval(self, segment):
        return "Avoid using aliases in join condition"
''',
    "test/rules/L031_test.py": '''def test_alias_message():
    assert "Avoid using aliases in join condition" in run()
''',
    "src/sqlfluff/core/config.py": '''def load(values):
    return values.get("max_line_length", 80)
''',
    "CHANGELOG.md": "# Changes\n\n- Avoid using aliases in join condition now respects TSQL.\n",
}

TRACE = '''"Dropped elements in sequence matching" when doubled semicolon
```console
$ echo "select id from tbl;;" | sqlfluff lint -
Traceback (most recent call last):
  File "/home/adam/prod/sqlfluff/src/sqlfluff/core/parser/helpers.py", line 30, in check_still_complete
    raise RuntimeError(
RuntimeError: Dropped elements in sequence matching! 'select id from tbl;;' != ';'
```
'''


def test_a_raised_message_leads_to_the_raising_definition(tmp_path):
    ctx = context_for(tmp_path, REPO, TRACE)
    found = lexical.run(ctx)
    assert {f.path for f in found} == {"src/sqlfluff/core/parser/helpers.py"}
    assert chunk_name(ctx, found[0]) == "check_still_complete"
    assert found[0].reason == 'contains the text "Dropped elements in sequence matching"'
    # Found verbatim (the quoted title), five words are nearly specific; as a fragment of the trace's message less so.
    assert heaviest(found)["src/sqlfluff/core/parser/helpers.py"] == pytest.approx(0.85 * 5 / 6)
    assert min(f.weight for f in found) == pytest.approx(0.85 * 5 / 8)


def test_a_message_is_searched_in_code_and_tests_quoting_it_do_not_dilute_the_source(tmp_path):
    ctx = context_for(tmp_path, REPO, "2/ fails with: L031: Avoid using aliases in join condition.")
    found = heaviest(lexical.run(ctx))
    assert set(found) == {"src/sqlfluff/rules/L031.py", "test/rules/L031_test.py"}
    assert found["src/sqlfluff/rules/L031.py"] == pytest.approx(0.85 * 6 / 8)


def test_a_quoted_line_of_code_is_found_where_it_is_written(tmp_path):
    ctx = context_for(tmp_path, REPO, "I think `current_str = \"\".join(s.raw for s in matched_segments` is wrong")
    assert {(f.path, chunk_name(ctx, f)) for f in lexical.run(ctx)} == {
        ("src/sqlfluff/core/parser/helpers.py", "check_still_complete")}


def test_a_configuration_key_without_a_definition_is_searched(tmp_path):
    found = lexical.run(context_for(tmp_path, REPO, "Setting `max_line_length` in .sqlfluff has no effect"))
    assert [(f.path, f.reason) for f in found] == [
        ("src/sqlfluff/core/config.py", 'reads or sets the key "max_line_length"')]


def test_short_generic_messages_weigh_little(tmp_path):
    files = {**REPO, "src/util.py": 'def f(x):\n    raise TypeError(f"{x} object is not subscriptable")\n'}
    found = heaviest(lexical.run(context_for(tmp_path, files, "TypeError: 'NoneType' object is not subscriptable")))
    assert found["src/util.py"] == pytest.approx(0.85 * 4 / 8)


def test_no_message_is_a_skip(tmp_path):
    with pytest.raises(Skipped):
        lexical.run(context_for(tmp_path, REPO, "extra space when the first field moves to a new line"))


def test_a_template_whose_literal_contradicts_the_message_is_not_the_source(tmp_path):
    files = {**REPO, "src/node.py": '''class Node:
    def __getattr__(self, name):
        raise AttributeError(f"{self} object has no attribute 'parent'")
''', "src/visitor.py": '''def lookup(obj, name):
    raise AttributeError(f"{obj!r} object has no attribute {name!r}")
'''}
    text = "AttributeError: 'AsStringVisitor' object has no attribute 'visit_unknown'"
    assert set(heaviest(lexical.run(context_for(tmp_path, files, text)))) == {"src/visitor.py"}


def test_a_short_quoted_message_is_found_where_a_literal_holds_it(tmp_path):
    files = {**REPO,
             "shop/currency.py": 'def convert(amount, currency):\n    if currency not in RATES:\n'
                                 '        raise ValueError("unknown currency")\n',
             "shop/docs.py": '"""Raises when the currency is unknown currency rates apply."""\n'}
    found = heaviest(lexical.run(context_for(tmp_path, files, 'convert fails with "unknown currency"')))
    # The literal is found; a docstring that merely repeats the words is not a literal that opens with them.
    assert set(found) == {"shop/currency.py"}
    assert 0 < found["shop/currency.py"] < 0.85
