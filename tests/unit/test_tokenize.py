"""The tokenizer decides which queries can reach which code, so its rules are pinned here."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lsp.index.terms import STOP_WORDS, path_tokens, query_tokens, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("getUserName", ["getusername", "get", "user", "name"]),
        ("rate_limit", ["rate_limit", "rate", "limit"]),
        ("Ledger.post", ["ledger", "post"]),
        ("UserNameField", ["usernamefield", "user", "name", "field"]),
        ("MAX_RETRY_COUNT", ["max_retry_count", "max", "retry", "count"]),
        ("__init__", ["__init__", "init"]),
    ],
)
def test_identifiers_come_whole_then_in_parts(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HTTPServerError", ["httpservererror", "http", "server", "error"]),
        ("IOError", ["ioerror", "io", "error"]),
        ("XMLHttpRequest", ["xmlhttprequest", "xml", "http", "request"]),
        ("getHTTPResponse", ["gethttpresponse", "get", "http", "response"]),
        ("HTTP", ["http"]),
    ],
)
def test_acronym_runs_end_before_a_capitalised_word(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The lone digit is a one-character part and is dropped.
        ("parseJSON2Xml", ["parsejson2xml", "parse", "json", "xml"]),
        ("sha256", ["sha256", "sha", "256"]),
        ("utf8", ["utf8", "utf"]),
        ("E1101", ["e1101", "1101"]),
        ("404 7 2024", ["404", "2024"]),
        # A token starting with a digit is kept whole.
        ("0x1F 100ms", ["0x1f", "100ms"]),
    ],
)
def test_digits(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("größeBerechnen", ["größeberechnen", "größe", "berechnen"]),
        ("ΑλφαΒήτα", ["αλφαβήτα", "αλφα", "βήτα"]),
        ("变量名", ["变量名"]),
        ("naïve_café", ["naïve_café", "naïve", "café"]),
    ],
)
def test_unicode_identifiers(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_stop_words_and_single_characters_are_dropped() -> None:
    assert tokenize("what is the rate of x in this loop") == ["rate", "loop"]
    assert tokenize("self.balance = this.total + i") == ["balance", "total"]


def test_stop_words_are_dropped_as_parts_but_kept_inside_wholes() -> None:
    assert tokenize("is_valid getX") == ["is_valid", "valid", "getx", "get"]


def test_meaningful_code_words_are_not_stop_words() -> None:
    assert tokenize("return None null error") == ["return", "none", "null", "error"]
    assert STOP_WORDS.isdisjoint({"error", "none", "null", "return", "get", "set", "not"})


def test_duplicates_are_kept_for_term_frequency() -> None:
    assert tokenize("user user_id") == ["user", "user_id", "user", "id"]


def test_query_tokens_are_distinct_in_first_seen_order() -> None:
    assert query_tokens("user userId user") == ["user", "userid", "id"]


@pytest.mark.parametrize("text", ["", "   \n\t", "... -> {}();", "a b c = 1 + 2", "_ __ ___"])
def test_nothing_to_index(text: str) -> None:
    assert tokenize(text) == []
    assert query_tokens(text) == []


def test_path_tokens_keep_segments_stem_and_extension() -> None:
    assert path_tokens("src/rate_limiter/config.py") == ["src", "rate_limiter", "rate", "limiter", "config", "py"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("web\\components\\UserCard.tsx", ["web", "components", "usercard", "user", "card", "tsx"]),
        ("docs/my-guide.test.md", ["docs", "my", "guide", "test", "md"]),
        (".github/workflows/ci.yml", ["github", "workflows", "ci", "yml"]),
        ("", []),
    ],
)
def test_path_tokens_split_on_both_separators_dots_and_dashes(path: str, expected: list[str]) -> None:
    assert path_tokens(path) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aZ_9é٣ \t\n.-+()x0İß"), max_size=60))
def test_tokens_are_identifiers_and_numbers_exactly(text: str) -> None:
    # The token pattern is `\w+`: an identifier (a letter or underscore, then word characters) or a number (a
    # digit, then word characters), the two rules the tokenizer states, written out.
    import re

    from rag_lsp.index.terms import _TOKEN_RE

    assert _TOKEN_RE.findall(text) == re.findall(r"[^\W\d]\w*|\d\w*", text)
