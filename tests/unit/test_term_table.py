"""A loaded segment's terms stay bytes and are found by their first eight bytes, then whole: every lookup must
agree with bisection over the same terms as Python strings, whatever their length, script or shared start."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lsp.index.store.term_table import StoredTerms

# Terms as the tokenizer makes them, and the awkward ones: shorter than the key, exactly eight bytes, long
# terms sharing their first eight bytes, multi-byte characters straddling the eighth byte, a lone surrogate.
AWKWARD = ["a", "ab", "abcdefgh", "abcdefgha", "abcdefghz", "abcdefghzz", "café", "caféterias", "caféteria",
           "日本語のテキスト", "日本語のテ", "\udcff", "z" * 40, "z" * 41, "ü"]


def stored(terms: list[str]) -> StoredTerms:
    return StoredTerms("\0".join(terms).encode("utf-8", "surrogatepass"))


def test_stored_terms_read_back_and_find_each_term():
    terms = sorted(set(AWKWARD))
    table = stored(terms)
    assert len(table) == len(terms) and list(table) == terms and [table[i] for i in range(len(terms))] == terms
    assert table[-1] == terms[-1] and table[1:3] == terms[1:3]
    assert [table.number(term) for term in terms] == list(range(len(terms)))
    for absent in ("", "abc", "abcdefg", "abcdefghy", "abcdefghzzz", "café!", "zz", "日本"):
        assert table.number(absent) == -1
    with pytest.raises(IndexError):
        table[len(terms)]


def test_no_terms():
    table = stored([])
    assert len(table) == 0 and list(table) == [] and table.number("a") == -1


@pytest.mark.parametrize("terms", [["b", "a"], ["abcdefghz", "abcdefgha"], ["same", "same"], ["ü", "z"]])
def test_terms_out_of_order_are_refused(terms):
    with pytest.raises(ValueError, match="sorted"):
        stored(terms)


@settings(max_examples=200, deadline=None)
@given(st.sets(st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), min_size=1, max_size=14),
               max_size=40),
       st.lists(st.text(max_size=14).filter(lambda text: "\0" not in text), max_size=10))
def test_any_vocabulary_agrees_with_bisection_over_strings(vocabulary, probes):
    terms = sorted(vocabulary)
    table = stored(terms)
    for term in [*terms, *probes]:
        assert table.number(term) == (terms.index(term) if term in vocabulary else -1)
