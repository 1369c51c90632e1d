"""BM25Index must score exactly like rank_bm25.BM25Okapi, whatever edits led to its state."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from rag_lsp.core.bm25 import BM25Index

TOLERANCE = 1e-9

HAND_CORPUS = {
    1: ["ledger", "post", "entry", "ledger", "balance"],
    2: ["rate", "limiter", "config", "rate"],
    3: ["http", "server", "error", "retry", "error"],
    4: ["ledger", "balance", "error"],
    5: ["user", "name", "get", "user"],
}


def build(docs: dict[int, list[str]], **params: float) -> BM25Index:
    index = BM25Index(**params)
    for doc_id, tokens in docs.items():
        index.add(doc_id, tokens)
    return index


def assert_matches_okapi(index: BM25Index, docs: dict[int, list[str]], query: list[str], **params: float) -> None:
    """Compare every score with BM25Okapi rebuilt from ``docs``, and the matched set with term overlap."""
    ids = sorted(docs)
    reference = BM25Okapi([docs[doc_id] for doc_id in ids], **params)
    expected = dict(zip(ids, reference.get_scores(query).tolist()))
    assert index.scores(query, ids) == pytest.approx(expected, abs=TOLERANCE)
    sharing = {doc_id for doc_id in ids if set(query) & set(docs[doc_id])}
    matched = index.scores(query)
    assert set(matched) == sharing
    assert matched == pytest.approx({doc_id: expected[doc_id] for doc_id in sharing}, abs=TOLERANCE)


def zipf_doc(rng: random.Random, vocabulary: list[str], weights: list[float]) -> list[str]:
    return rng.choices(vocabulary, weights, k=rng.randint(1, 30))


@pytest.mark.parametrize(
    "query",
    [
        ["ledger"],
        ["ledger", "balance", "error"],
        ["rate", "limiter", "user", "http"],
        ["error", "error"],
        ["missing", "ledger", "unknown"],
    ],
)
def test_hand_corpus(query: list[str]) -> None:
    assert_matches_okapi(build(HAND_CORPUS), HAND_CORPUS, query)


@pytest.mark.parametrize("params", [{"k1": 1.2, "b": 0.5, "epsilon": 0.1}, {"k1": 2.0, "b": 1.0, "epsilon": 0.5}, {"b": 0.0}])
def test_parameters_are_honoured(params: dict[str, float]) -> None:
    assert_matches_okapi(build(HAND_CORPUS, **params), HAND_CORPUS, ["ledger", "error", "rate"], **params)


def test_random_corpus() -> None:
    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(300)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    docs = {doc_id: zipf_doc(rng, vocabulary, weights) for doc_id in rng.sample(range(10_000), 400)}
    index = build(docs)
    for _ in range(25):
        query = rng.choices(vocabulary, weights, k=rng.randint(1, 8))
        assert_matches_okapi(index, docs, query)


def test_insertion_order_does_not_matter() -> None:
    forward = build(HAND_CORPUS)
    backward = build(dict(reversed(list(HAND_CORPUS.items()))))
    query = ["ledger", "error", "user"]
    assert forward.scores(query) == pytest.approx(backward.scores(query), abs=TOLERANCE)


def test_random_edits_then_compare_with_rebuilt_reference() -> None:
    rng = random.Random(11)
    vocabulary = [f"w{i}" for i in range(60)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    index = BM25Index()
    docs: dict[int, list[str]] = {}
    for step in range(2_000):
        doc_id = rng.randrange(120)
        if rng.random() < 0.35 and doc_id in docs:
            index.remove(doc_id)
            del docs[doc_id]
        else:
            docs[doc_id] = zipf_doc(rng, vocabulary, weights)
            index.replace(doc_id, docs[doc_id])
        if step % 200 == 199:
            assert_matches_okapi(index, docs, rng.choices(vocabulary, weights, k=6))


operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "replace", "remove"]),
        st.integers(0, 12),
        st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]), max_size=8),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(operations, st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "zz"]), min_size=1, max_size=5))
def test_any_edit_sequence_matches_rebuilt_reference(ops, query) -> None:
    index = BM25Index()
    docs: dict[int, list[str]] = {}
    for op, doc_id, tokens in ops:
        if op == "add" and doc_id not in docs:
            index.add(doc_id, tokens)
            docs[doc_id] = tokens
        elif op == "replace":
            index.replace(doc_id, tokens)
            docs[doc_id] = tokens
        elif op == "remove" and doc_id in docs:
            index.remove(doc_id)
            del docs[doc_id]
    assert len(index) == len(docs)
    if any(docs.values()):
        assert_matches_okapi(index, docs, query)
    else:
        # BM25Okapi cannot even be built here; the index just has no matches.
        assert index.scores(query) == {}
        assert index.scores(query, docs) == dict.fromkeys(docs, 0.0)


def test_heavy_removal_compacts_without_losing_documents() -> None:
    docs = {doc_id: ["common", f"own{doc_id}", "common"] for doc_id in range(200)}
    index = build(docs)
    for doc_id in range(0, 190):
        index.remove(doc_id)
        del docs[doc_id]
    docs.update({doc_id: ["common", "fresh"] for doc_id in range(1_000, 1_050)})
    for doc_id in range(1_000, 1_050):
        index.add(doc_id, docs[doc_id])
    assert_matches_okapi(index, docs, ["common", "fresh", "own195"])
    for doc_id in list(docs):
        index.remove(doc_id)
    assert len(index) == 0
    assert index.scores(["common"]) == {}


def test_duplicate_query_terms_count_twice() -> None:
    index = build(HAND_CORPUS)
    single = index.scores(["ledger"])
    double = index.scores(["ledger", "ledger"])
    assert double == pytest.approx({doc_id: 2 * score for doc_id, score in single.items()}, abs=TOLERANCE)
    assert_matches_okapi(index, HAND_CORPUS, ["ledger", "error", "ledger"])


def test_unknown_terms_contribute_nothing() -> None:
    index = build(HAND_CORPUS)
    assert index.scores(["nowhere", "ledger"]) == pytest.approx(index.scores(["ledger"]), abs=TOLERANCE)
    assert index.scores(["nowhere"]) == {}
    assert index.top_k(["nowhere"], 3) == []
    assert index.scores(["nowhere"], [1, 2]) == {1: 0.0, 2: 0.0}


def test_term_in_every_document_gets_the_epsilon_floor() -> None:
    docs = {doc_id: ["everywhere", f"unique{doc_id}"] for doc_id in range(10)}
    reference = BM25Okapi(list(docs.values()))
    assert reference.idf["everywhere"] == pytest.approx(reference.epsilon * reference.average_idf)
    assert reference.idf["everywhere"] > 0
    assert_matches_okapi(build(docs), docs, ["everywhere"])
    assert_matches_okapi(build(docs), docs, ["everywhere", "unique3"])


def test_negative_average_idf_gives_negative_scores_like_okapi() -> None:
    docs = {1: ["foo", "bar"], 2: ["foo", "baz"], 3: ["foo"]}
    index = build(docs)
    assert_matches_okapi(index, docs, ["foo"])
    scores = index.scores(["foo"])
    assert all(score < 0 for score in scores.values())
    # The shortest document saturates most, which here means most negative.
    assert [doc_id for doc_id, _ in index.top_k(["foo"], 3)] == [1, 2, 3]


def test_zero_idf_documents_still_match() -> None:
    # A term in exactly half of the documents has an idf of exactly 0.
    docs = {1: ["half"], 2: ["other"]}
    index = build(docs)
    assert index.scores(["half"]) == {1: 0.0}
    assert index.top_k(["half"], 5) == [(1, 0.0)]
    assert_matches_okapi(index, docs, ["half", "other"])


def test_empty_documents_count_towards_length_statistics() -> None:
    docs = {1: [], 2: ["alpha", "beta"], 3: ["alpha"], 4: []}
    index = build(docs)
    assert len(index) == 4
    assert_matches_okapi(index, docs, ["alpha", "beta"])


def test_only_empty_documents() -> None:
    index = build({1: [], 2: []})
    assert index.scores(["alpha"]) == {}
    assert index.scores(["alpha"], [1, 2]) == {1: 0.0, 2: 0.0}
    assert index.top_k(["alpha"], 3) == []


def test_empty_index() -> None:
    index = BM25Index()
    assert len(index) == 0
    assert 1 not in index
    assert index.scores(["alpha"]) == {}
    assert index.scores(["alpha"], []) == {}
    assert index.scores([]) == {}
    assert index.top_k(["alpha"], 10) == []


def test_removing_the_last_document_empties_the_index() -> None:
    index = BM25Index()
    index.add(1, ["alpha", "beta"])
    index.remove(1)
    assert len(index) == 0
    assert 1 not in index
    assert index.scores(["alpha"]) == {}
    assert index.top_k(["alpha"], 1) == []
    index.add(1, ["gamma"])
    assert set(index.scores(["gamma", "alpha"])) == {1}


def test_top_k_orders_by_score_then_ascending_doc_id() -> None:
    docs = {
        9: ["match", "match", "pad"],
        4: ["match", "pad", "pad", "pad"],
        7: ["match", "pad", "pad", "pad"],
        2: ["match", "pad", "pad", "pad"],
        5: ["pad", "pad"],
        8: ["other"],
        1: ["other", "pad"],
    }
    # Unrelated documents keep "match" rare, so its idf is positive.
    docs.update({doc_id: [f"filler{doc_id}"] for doc_id in range(10, 20)})
    index = build(docs)
    ranked = index.top_k(["match"], 10)
    assert [doc_id for doc_id, _ in ranked] == [9, 2, 4, 7]
    assert ranked[1][1] == ranked[2][1] == ranked[3][1] < ranked[0][1]
    # The cut at k falls inside the tie, and the smallest ids win it.
    assert [doc_id for doc_id, _ in index.top_k(["match"], 2)] == [9, 2]
    assert [doc_id for doc_id, _ in index.top_k(["match"], 3)] == [9, 2, 4]
    assert index.top_k(["match"], 0) == []
    assert index.top_k(["match"], -1) == []


def test_top_k_agrees_with_scores() -> None:
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(80)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    docs = {doc_id: zipf_doc(rng, vocabulary, weights) for doc_id in range(300)}
    index = build(docs)
    for _ in range(10):
        query = rng.choices(vocabulary, weights, k=4)
        expected = sorted(index.scores(query).items(), key=lambda item: (-item[1], item[0]))
        assert index.top_k(query, 15) == expected[:15]


def test_add_refuses_a_known_id() -> None:
    index = build(HAND_CORPUS)
    with pytest.raises(ValueError):
        index.add(1, ["again"])
    assert_matches_okapi(index, HAND_CORPUS, ["again", "ledger"])


def test_remove_refuses_an_unknown_id() -> None:
    index = build(HAND_CORPUS)
    with pytest.raises(KeyError):
        index.remove(99)
    index.remove(1)
    with pytest.raises(KeyError):
        index.remove(1)


def test_scores_refuse_unknown_ids() -> None:
    with pytest.raises(KeyError):
        build(HAND_CORPUS).scores(["ledger"], [1, 99])


def test_replace_adds_or_overwrites() -> None:
    index = BM25Index()
    index.replace(1, ["alpha"])
    index.replace(2, ["beta"])
    index.replace(1, ["gamma", "gamma"])
    assert len(index) == 2
    assert 1 in index
    assert index.scores(["alpha"]) == {}
    assert_matches_okapi(index, {1: ["gamma", "gamma"], 2: ["beta"]}, ["gamma", "beta"])
