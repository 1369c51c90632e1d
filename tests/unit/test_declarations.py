"""The declaration patterns of languages without a grammar: data that stays safe, an engine that never raises.

What each language's patterns find is checked by its fixture
(``tests/unit/test_language_fixtures.py``); this module checks the data
itself and the engine's rules on small cases.
"""

import re
import tomllib
from importlib import resources
from re import _parser as sre

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp import languages
from rag_lsp.index.parsing.chunk import CHUNK_KINDS
from rag_lsp.index.parsing.declarations import MAX_LINE_CHARS, all_rules
from rag_lsp.index.parsing.parse import parse_file

RAW = tomllib.loads(resources.files("rag_lsp").joinpath("data/declarations.toml").read_text("utf-8"))
LANGUAGES = sorted(RAW)
KINDS = CHUNK_KINDS | {"constant", "property"}
LANGUAGE_KEYS = {"declarations", "prefix", "keywords", "attached", "regions", "closers", "continuations",
                 "ignored", "clauses"}
PATTERN_KEYS = {"kind", "regex", "member_only", "needs_prefix"}
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def regexes(entry: dict) -> list[str]:
    found = [pattern["regex"] for pattern in entry["declarations"]]
    found += [entry[key] for key in ("prefix", "attached", "closers", "continuations", "ignored") if key in entry]
    found += [regex for pair in entry.get("regions", ()) for regex in pair]
    return found


def _children(op, av) -> list:
    """The sub-patterns of one parsed regex item."""
    if op in _REPEATS:
        return [av[2]]
    if op is sre.SUBPATTERN:
        return [av[3]]
    if op is sre.BRANCH:
        return list(av[1])
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return [av[1]]
    return []


def _repeats(pattern) -> bool:
    """Whether a parsed regex repeats anything more than once."""
    return any((op in _REPEATS and av[1] > 1) or any(_repeats(child) for child in _children(op, av))
               for op, av in pattern)


def nested_repeats(pattern) -> list[str]:
    """Repeated groups that contain a repetition themselves: the shape of catastrophic backtracking."""
    found = []
    for op, av in pattern:
        if op in _REPEATS and av[1] > 1 and _repeats(av[2]):
            found.append(str(av[2]))
        for child in _children(op, av):
            found += nested_repeats(child)
    return found


def test_nested_repeats_are_detected():
    assert nested_repeats(sre.parse(r"(?:\w+\s*)*x"))
    assert nested_repeats(sre.parse(r"(a|(?:bc+))+"))
    assert not nested_repeats(sre.parse(r'^(?:[^"]|"(?!""))*"""(?:\s*=>)?'))


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_pattern_nests_a_repetition(language):
    for regex in regexes(RAW[language]):
        assert not nested_repeats(sre.parse(regex)), f"{language}: {regex}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_entries_use_known_keys_and_kinds(language):
    entry = RAW[language]
    assert set(entry) <= LANGUAGE_KEYS, set(entry) - LANGUAGE_KEYS
    for pattern in entry["declarations"]:
        assert set(pattern) <= PATTERN_KEYS, pattern
        assert pattern["kind"] in KINDS, pattern
        assert "(?P<name>" in pattern["regex"], pattern
    assert set(entry.get("clauses", ())) <= KINDS


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_with_patterns_is_chunked_by_them(language):
    assert languages.spec(language).chunker == "declarations"


def _parse(path: str, text: str):
    parsed = parse_file(path, text)
    assert parsed.error is None
    return [(d.qualname, d.kind, d.start_line, d.end_line) for d in parsed.definitions]


def test_a_definition_reaches_over_deeper_lines_and_its_closer():
    text = "class Shop {\n    func open() {\n        run()\n\n    }\n}\nlet x = 1\n"
    assert _parse("a.swift", text) == [("Shop", "class", 1, 6), ("Shop.open", "method", 2, 5)]


def test_a_closing_parenthesis_ends_no_definition_however_little_indented():
    text = 'class A\n{\n    void Run()\n    {\n        Go(@"\nselect 1\n"\n);\n    }\n}\n'
    assert _parse("a.cs", text) == [("A", "class", 1, 10), ("A.Run", "method", 3, 9)]


def test_a_body_less_indented_than_its_declaration_ends_it_early():
    """The documented limit: the rest of the body becomes top-level code."""
    text = "run() {\necho hi\n}\n"
    parsed = parse_file("a.sh", text)
    assert [(d.name, d.end_line) for d in parsed.definitions] == [("run", 1)]
    assert [(c.kind, c.start_line, c.end_line) for c in parsed.chunks] == [("function", 1, 1), ("code", 2, 3)]


def test_clauses_of_one_function_are_one_definition():
    text = "foo :: Int -> Int\nfoo 0 = 1\nfoo n = n\n\nbar :: Int\nbar = 2\n"
    assert _parse("a.hs", text) == [("foo", "function", 1, 3), ("bar", "function", 5, 6)]


def test_member_only_declarations_inside_functions_are_locals():
    text = "class A {\n    val size = 1\n    fun grow() {\n        val step = 2\n    }\n}\n"
    assert [d[0] for d in _parse("a.kt", text)] == ["A", "A.size", "A.grow"]


def test_a_doc_region_attaches_only_when_it_opens_like_a_doc():
    doc = 'defmodule A do\n  @doc """\n  Docs.\n  """\n  def f, do: 1\nend\n'
    assert _parse("a.ex", doc)[1] == ("A.f", "function", 2, 5)
    string = 'class A {\n    val s = """\n    x\n    """\n    fun f() {}\n}\n'
    assert _parse("a.kt", string)[-1] == ("A.f", "method", 5, 5)


def test_keywords_are_no_names_and_prefixes_are_skipped():
    text = "class Shop {\n    public class func make() -> Shop { Shop() }\n}\n"
    assert _parse("a.swift", text) == [("Shop", "class", 1, 3), ("Shop.make", "method", 2, 2)]


def test_a_pattern_that_needs_a_prefix_does_not_match_a_bare_call():
    text = "class A\n{\n    public A() { }\n    void F()\n    {\n        Run();\n    }\n}\n"
    assert [d[:2] for d in _parse("a.cs", text)] == [("A", "class"), ("A.A", "constructor"), ("A.F", "method")]


def test_only_the_start_of_a_long_line_is_read():
    name = "x" * (MAX_LINE_CHARS + 10)
    assert _parse("a.lua", f"function {name}()\nend\n") == []
    assert _parse("a.lua", "function f()\nend\n") == [("f", "function", 1, 2)]


SNIPPETS = [
    "class", "func", "fun", "def", "defp", "function", "fn", "struct", "enum", "trait", "object", "interface",
    "protocol", "extension", "public", "private", "static", "@Attr", "[Fact]", "val", "var", "const", "local",
    "data", "newtype", "type", "instance", "where", "do", "end", "::", "=", "=>", "->", "(", ")", "{", "}",
    "[", "]", "<", ">", '"""', "'''", '@"', '"', "'", "/*", "*/", "{-", "-}", "--[[", "]]", "<<EOF", "EOF",
    "#if", "#endif", "//", "#", "--", "`", ",", ":", ";", ".", "Foo", "bar", "x", "é", "\t", "\r",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(
        st.tuples(st.integers(0, 12), st.lists(st.sampled_from(SNIPPETS) | st.text(max_size=6), max_size=12)),
        max_size=40,
    ),
    language=st.sampled_from(LANGUAGES),
)
def test_declarations_never_raise_and_stay_in_bounds(lines, language):
    text = "".join(" " * indent + " ".join(words) + "\n" for indent, words in lines)
    extension = languages.spec(language).extensions[0]
    parsed = parse_file(f"f{extension}", text)
    assert parsed.error is None
    line_count = max(len(text.splitlines()), 1)
    size = len(text.encode())
    for d in parsed.definitions:
        assert 1 <= d.start_line <= d.end_line <= line_count
        assert 0 <= d.start_byte <= d.end_byte <= size
    for c in parsed.chunks:
        assert 1 <= c.start_line <= c.end_line <= line_count
        assert 0 <= c.start_byte <= c.end_byte <= size


@pytest.mark.parametrize("language", LANGUAGES)
def test_hostile_lines_parse(language):
    """Long runs of what the patterns look for (a backtracking regex would take ages here)."""
    extension = languages.spec(language).extensions[0]
    hostile = [
        "public " * 300 + "class",
        "a" * 50_000 + "(",
        "fun " + "<" * 2000 + "x(",
        '"' * 3000,
        "x " * 3000 + "=",
        "(" * 2000 + ")" * 2000,
        "@" + "a." * 2000,
    ]
    parsed = parse_file(f"f{extension}", "\n".join(hostile) + "\n")
    assert parsed.error is None
    assert parsed.chunks


def test_regexes_compile_with_the_names_the_engine_reads():
    for language, rules in all_rules().items():
        for pattern in rules.patterns:
            assert "name" in pattern.regex.groupindex, language
            assert set(pattern.regex.groupindex) <= {"name", "container"}, language
        assert isinstance(rules.continuations, re.Pattern)
