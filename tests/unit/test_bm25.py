"""BM25Index must score exactly like rank_bm25.BM25Okapi, whatever edits led to its state."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from rag_lsp.index.postings import bm25_index, bm25_segment
from rag_lsp.index.postings import bm25_mutable as bm25
from rag_lsp.index.postings.bm25_index import BM25Index
from rag_lsp.index.postings.bm25_mutable import MutableBM25
from rag_lsp.index.postings.bm25_segment import FrozenSegment
from rag_lsp.index.store import snapshot as snapshot_format
from rag_lsp.index.store.snapshot_file import SnapshotFile, SnapshotWriter

# Arithmetic on empty or degenerate corpora must not divide by zero: a NaN norm would be a wrong score.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

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


def zipf_corpus(rng: random.Random, words: int, count: int) -> tuple[list[str], list[float], dict[int, list[str]]]:
    """A vocabulary of ``words`` words, their Zipf weights, and ``count`` documents (ids 0 to ``count - 1``)."""
    vocabulary = [f"w{i}" for i in range(words)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    return vocabulary, weights, {doc_id: zipf_doc(rng, vocabulary, weights) for doc_id in range(count)}


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
    for doc_id in range(190):
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


def test_a_query_that_extends_a_remembered_one_scores_as_if_asked_alone() -> None:
    # A question's terms, then the same with more after them (word forms, feedback terms) continue from the
    # remembered scores of the first: the same sums to the bit, and the same matches, also when a term with a
    # zero idf ("common", in exactly half of the documents) is on either side of the join.
    rng = random.Random(11)
    vocabulary = [f"w{i}" for i in range(40)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    docs = {doc_id: zipf_doc(rng, vocabulary, weights) for doc_id in rng.sample(range(1_000), 60)}
    for doc_id in list(docs)[:30]:
        docs[doc_id] = [*docs[doc_id], "common"]
    for _ in range(40):
        first = rng.choices([*vocabulary, "common", "unknown"], k=rng.randint(1, 5))
        extended = first + rng.choices([*vocabulary, "common", "unknown"], k=rng.randint(1, 5))
        continued, alone = build(docs), build(docs)
        continued.top_k(first, 5)
        assert continued.scores(extended) == alone.scores(extended)
        assert continued.top_k(extended, 10) == alone.top_k(extended, 10)
        assert_matches_okapi(continued, docs, extended)


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


# add_many must leave an index that behaves exactly as the one add() called on each document in order would:
# same scores, and the same state as every later query and edit sees it, so that they all behave the same.


def snapshot(bm25_index: BM25Index) -> dict:
    """The state of the index's mutable part as queries and edits see it: each document's slot, length and
    distinct terms, each term's document frequency and postings (in any order), the totals and the slots that
    the next documents will take."""
    index = bm25_index.mutable
    slots, ids, lengths = index.documents()
    terms, dfs = index.frequencies()
    return {
        "documents": sorted(zip(ids.tolist(), slots.tolist(), lengths.tolist())),
        "terms_of": {doc_id: sorted(index.shared_terms(doc_id, terms)) for doc_id in ids.tolist()},
        "df": dict(zip(terms, dfs.tolist())),
        "postings": {term: sorted(zip(*(column.tolist() for column in index.postings(term)))) for term in terms},
        "total_len": index.total_length,
        "slot_count": index.slot_count,
        "free_slots": list(index._free_slots),
    }


def sequential_and_bulk(history, batch) -> tuple[BM25Index, BM25Index]:
    """Replay ``history`` (add/remove steps) on two indexes, then add ``batch`` one by one and with add_many."""
    one_by_one, bulk = BM25Index(), BM25Index()
    for index in (one_by_one, bulk):
        for op, doc_id, tokens in history:
            index.add(doc_id, tokens) if op == "add" else index.remove(doc_id)
    for doc_id, tokens in batch:
        one_by_one.add(doc_id, tokens)
    bulk.add_many(batch)
    return one_by_one, bulk


def random_history(rng: random.Random, vocabulary: list[str], weights: list[float], ids: range):
    """Adds of random documents, then removes of about half of them (freeing slots, leaving tombstones)."""
    docs = {doc_id: zipf_doc(rng, vocabulary, weights) for doc_id in rng.sample(ids, len(ids) // 2)}
    history = [("add", doc_id, tokens) for doc_id, tokens in docs.items()]
    removed = rng.sample(sorted(docs), len(docs) // 2)
    history += [("remove", doc_id, None) for doc_id in removed]
    for doc_id in removed:
        del docs[doc_id]
    return history, docs


@pytest.fixture(params=[1, 7, 64, None], ids=["batch=1", "batch=7", "batch=64", "batch=default"])
def batch_tokens(request, monkeypatch):
    """Run add_many with small internal batches too, so that terms span batches."""
    if request.param is not None:
        monkeypatch.setattr(bm25, "_BATCH_TOKENS", request.param)
    return request.param


def test_add_many_matches_okapi_on_a_random_corpus(batch_tokens) -> None:
    rng = random.Random(17)
    vocabulary = [f"w{i}" for i in range(300)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    docs = {doc_id: zipf_doc(rng, vocabulary, weights) for doc_id in rng.sample(range(10_000), 400)}
    index = BM25Index()
    index.add_many(docs.items())
    assert len(index) == len(docs)
    for _ in range(25):
        assert_matches_okapi(index, docs, rng.choices(vocabulary, weights, k=rng.randint(1, 8)))


def test_add_many_leaves_the_state_sequential_adds_leave(batch_tokens) -> None:
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(40)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    history, docs = random_history(rng, vocabulary, weights, range(200))
    # More new documents than freed slots: some reuse slots, the rest append.
    batch = [(doc_id, zipf_doc(rng, vocabulary, weights)) for doc_id in rng.sample(range(200, 400), 80)]
    batch[3] = (batch[3][0], [])
    one_by_one, bulk = sequential_and_bulk(history, batch)
    assert snapshot(bulk) == snapshot(one_by_one)
    docs.update(batch)
    assert_matches_okapi(bulk, docs, ["w0", "w3", "w17", "w39"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 15), st.lists(st.sampled_from("abcdefg"), max_size=8)), max_size=15),
    operations,
    st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "zz"]), min_size=1, max_size=5),
    st.sampled_from([1, 3, 1 << 21]),
)
def test_edits_after_add_many_match_rebuilt_reference(initial, ops, query, batch) -> None:
    docs = dict(initial)
    index, twin = BM25Index(), BM25Index()
    original = bm25._BATCH_TOKENS
    bm25._BATCH_TOKENS = batch
    try:
        index.add_many(docs.items())
    finally:
        bm25._BATCH_TOKENS = original
    for doc_id, tokens in docs.items():
        twin.add(doc_id, tokens)
    for op, doc_id, tokens in ops:
        if op == "add" and doc_id not in docs:
            docs[doc_id] = tokens
            for target in (index, twin):
                target.add(doc_id, tokens)
        elif op == "replace":
            docs[doc_id] = tokens
            for target in (index, twin):
                target.replace(doc_id, tokens)
        elif op == "remove" and doc_id in docs:
            del docs[doc_id]
            for target in (index, twin):
                target.remove(doc_id)
    assert snapshot(index) == snapshot(twin)
    assert index.top_k(query, 20) == twin.top_k(query, 20)
    # A reason's matching words come from the forward index, in the segment and in the mutable part alike.
    for doc_id, tokens in docs.items():
        assert index.shared_terms(doc_id, query) == set(query) & set(tokens)
    if any(docs.values()):
        assert_matches_okapi(index, docs, query)
    else:
        assert index.scores(query) == {}
    index.compact()
    assert_segment_layout(index.segment, docs)


def stored_segment(index: BM25Index) -> FrozenSegment:
    """The index's documents as one segment written to an anonymous snapshot file (in pieces, as a save writes
    them) and mapped back."""
    writer = SnapshotWriter(None)
    snapshot_format._save_segment(SimpleNamespace(bm25=index), writer)
    return snapshot_format.load_segment(SnapshotFile(writer.commit({})))


def assert_segment_layout(segment: FrozenSegment, docs: dict[int, list[str]]) -> None:
    """The segment's arrays are exactly the layout of ``docs``, derived here from the documents alone: rows in
    ascending id, terms in sorted order (only those some document has), postings term-major in ascending row,
    each row's terms ascending, in the dtypes the snapshot stores."""
    ids = sorted(docs)
    terms = sorted({term for tokens in docs.values() for term in tokens})
    number = {term: position for position, term in enumerate(terms)}
    postings = [[(row, float(docs[doc_id].count(term))) for row, doc_id in enumerate(ids) if term in docs[doc_id]]
                for term in terms]
    forward = [sorted(number[term] for term in set(docs[doc_id])) for doc_id in ids]
    arrays = segment.arrays()
    assert list(segment.terms) == terms
    assert {name: array.dtype.str for name, array in arrays.items()} == {
        "term_ptr": "<i8", "post_doc": "<i4", "post_tf": "<f4", "doc_ids": "<i8", "doc_len": "<i4",
        "doc_ptr": "<i8", "doc_terms": "<i4"}
    assert arrays["doc_ids"].tolist() == ids
    assert arrays["doc_len"].tolist() == [len(docs[doc_id]) for doc_id in ids]
    assert arrays["term_ptr"].tolist() == np.cumsum([0, *map(len, postings)]).tolist()
    assert arrays["post_doc"].tolist() == [row for found in postings for row, _ in found]
    assert arrays["post_tf"].tolist() == [tf for found in postings for _, tf in found]
    assert arrays["doc_ptr"].tolist() == np.cumsum([0, *map(len, forward)]).tolist()
    assert arrays["doc_terms"].tolist() == [term for found in forward for term in found]


def test_add_many_after_adds_and_removes_reuses_slots() -> None:
    index = build(HAND_CORPUS)
    index.remove(2)
    index.remove(4)
    docs = {doc_id: tokens for doc_id, tokens in HAND_CORPUS.items() if doc_id not in (2, 4)}
    # A query first, so that what add_many makes stale has been computed.
    assert_matches_okapi(index, docs, ["ledger", "user", "error"])
    batch = {10: ["rate", "ledger", "rate"], 11: ["error"], 12: ["new", "terms", "here"]}
    index.add_many(batch.items())
    docs.update(batch)
    assert sorted(index.mutable._doc_id_at.tolist()[1:]) == sorted(docs)  # two slots were reused, one appended
    assert_matches_okapi(index, docs, ["rate", "ledger", "error", "new"])
    index.remove(11)
    index.replace(10, ["ledger"])
    index.add(13, ["terms"])
    del docs[11]
    docs.update({10: ["ledger"], 13: ["terms"]})
    assert_matches_okapi(index, docs, ["rate", "ledger", "error", "terms"])


def test_add_many_of_nothing_changes_nothing() -> None:
    index = build(HAND_CORPUS)
    before = snapshot(index)
    index.add_many([])
    index.add_many(iter(()))
    assert snapshot(index) == before
    empty = BM25Index()
    empty.add_many([])
    assert len(empty) == 0
    assert empty.top_k(["ledger"], 3) == []


def test_add_many_of_empty_documents() -> None:
    one_by_one, bulk = sequential_and_bulk([], [(1, []), (2, [])])
    assert snapshot(bulk) == snapshot(one_by_one)
    assert len(bulk) == 2
    assert bulk.scores(["alpha"], [1, 2]) == {1: 0.0, 2: 0.0}
    batch = [(3, []), (4, ["alpha", "beta"]), (5, []), (6, ["alpha"])]
    one_by_one.add_many(batch)
    for doc_id, tokens in batch:
        bulk.add(doc_id, tokens)
    assert snapshot(bulk) == snapshot(one_by_one)
    assert_matches_okapi(one_by_one, {1: [], 2: [], **dict(batch)}, ["alpha", "beta"])


def test_add_many_consumes_any_iterable_once() -> None:
    index = BM25Index()
    index.add_many((doc_id, tokens) for doc_id, tokens in HAND_CORPUS.items())
    assert_matches_okapi(index, HAND_CORPUS, ["ledger", "error", "rate"])
    tupled = BM25Index()
    tupled.add_many((doc_id, tuple(tokens)) for doc_id, tokens in HAND_CORPUS.items())
    assert snapshot(tupled) == snapshot(index)


@pytest.mark.parametrize(
    "batch",
    [
        [(20, ["a"]), (21, ["b"]), (20, ["c"])],  # twice in the batch
        [(20, ["a"]), (3, ["b"])],  # already indexed
    ],
    ids=["within the batch", "already indexed"],
)
def test_add_many_refuses_a_duplicate_id_and_changes_nothing(batch) -> None:
    index = build(HAND_CORPUS)
    index.remove(5)
    before = snapshot(index)
    with pytest.raises(ValueError, match="already indexed"):
        index.add_many(batch)
    assert snapshot(index) == before
    assert 20 not in index


@pytest.mark.parametrize(
    "batch, error",
    [
        ([(20, ["a"]), (21, ["b", ["unhashable"]])], TypeError),
        ([(20, ["a"]), ("21", ["b"])], TypeError),
        ([(20, ["a"]), (2**63, ["b"])], OverflowError),
    ],
    ids=["unhashable token", "id not an int", "id too large"],
)
def test_add_many_refuses_what_add_refuses_and_changes_nothing(batch, error) -> None:
    index = build(HAND_CORPUS)
    before = snapshot(index)
    with pytest.raises(error):
        index.add(*batch[1])
    with pytest.raises(error):
        index.add_many(batch)
    assert snapshot(index) == before


def test_add_many_top_k_equals_sequential_top_k_including_ties() -> None:
    rng = random.Random(23)
    vocabulary = [f"w{i}" for i in range(25)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    # Many identical documents make many exactly tied scores.
    shapes = [zipf_doc(rng, vocabulary, weights) for _ in range(12)]
    ids = rng.sample(range(1_000), 300)
    batch = [(doc_id, list(rng.choice(shapes))) for doc_id in ids]
    history = [("add", 5_000 + i, list(shape)) for i, shape in enumerate(shapes)]
    history += [("remove", 5_000, None), ("remove", 5_003, None)]
    one_by_one, bulk = sequential_and_bulk(history, batch)
    for _ in range(20):
        query = rng.choices(vocabulary, weights, k=rng.randint(1, 5))
        for k in (1, 7, 50, 400):
            assert bulk.top_k(query, k) == one_by_one.top_k(query, k)


# The index is a frozen segment (loaded in bulk by a warm start) plus a mutable part; compacting folds the
# mutable part in. Whatever was compacted when, the scores are BM25Okapi's over the documents indexed now.


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 15), st.lists(st.sampled_from("abcdefg"), max_size=8)), max_size=15),
    st.lists(st.tuples(st.sampled_from(["add", "replace", "remove", "compact"]), st.integers(0, 15),
                       st.lists(st.sampled_from("abcdefg"), max_size=8)), max_size=40),
    st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "zz"]), min_size=1, max_size=5),
)
def test_edits_across_compactions_match_rebuilt_reference(initial, ops, query) -> None:
    docs = dict(initial)
    index, twin = BM25Index(), BM25Index()
    index.add_many(docs.items())
    twin.add_many(docs.items())
    index.compact()
    for op, doc_id, tokens in ops:
        if op == "compact":
            index.compact()
        elif op == "add" and doc_id not in docs:
            docs[doc_id] = tokens
            index.add(doc_id, tokens)
            twin.add(doc_id, tokens)
        elif op == "replace":
            docs[doc_id] = tokens
            index.replace(doc_id, tokens)
            twin.replace(doc_id, tokens)
        elif op == "remove" and doc_id in docs:
            del docs[doc_id]
            index.remove(doc_id)
            twin.remove(doc_id)
        assert len(index) == len(docs) and all(doc_id in index for doc_id in docs)
    ranked, reference = index.top_k(query, 20), twin.top_k(query, 20)
    assert dict(ranked) == pytest.approx(dict(reference), abs=TOLERANCE)
    assert sorted(index.lengths()[0].tolist()) == sorted(docs)
    for term in query:
        ids, tfs, lengths = index.postings(term)
        assert sorted(zip(ids.tolist(), tfs.tolist(), lengths.tolist())) == sorted(
            (doc_id, float(tokens.count(term)), len(tokens)) for doc_id, tokens in docs.items() if term in tokens)
    # A reason's matching words come from the forward index, in the segment and in the mutable part alike.
    for doc_id, tokens in docs.items():
        assert index.shared_terms(doc_id, query) == set(query) & set(tokens)
    if any(docs.values()):
        assert_matches_okapi(index, docs, query)
    else:
        assert index.scores(query) == {}
    index.compact()
    assert_segment_layout(index.segment, docs)


def test_a_segment_saved_as_arrays_loads_back_and_scores_the_same() -> None:
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(200)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    docs = {doc_id: zipf_doc(rng, vocabulary, weights) for doc_id in rng.sample(range(5_000), 300)}
    index = BM25Index()
    index.add_many(docs.items())
    index.compact()
    stored = {name: array.copy() for name, array in index.segment.arrays().items()}
    loaded = BM25Index(segment=FrozenSegment.from_arrays(list(index.segment.terms), stored))
    for _ in range(10):
        query = rng.choices(vocabulary, weights, k=rng.randint(1, 6))
        assert loaded.top_k(query, 15) == index.top_k(query, 15)
        assert_matches_okapi(loaded, docs, query)


def test_segment_terms_are_sorted_and_found_by_number_after_merges_and_removals() -> None:
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(150)] + ["Zeta", "alpha", "ärger", "_x", "9lives"]
    index = BM25Index()
    for round_ in range(3):
        docs = {round_ * 1000 + n: rng.choices(vocabulary, k=rng.randint(1, 12)) for n in range(60)}
        index.add_many(docs.items())
        for doc_id in rng.sample(sorted(docs), 10):
            index.remove(doc_id)
        index.compact()
        terms = index.segment.terms
        assert terms == sorted(set(terms))
        # Each term's number is its place in the list, whose postings are its documents.
        for number, term in enumerate(terms):
            assert index.segment.number(term) == number
            rows, _ = index.segment.postings(term)
            assert len(rows) == index.segment.df(term) > 0
        assert index.segment.number("absent") == index.segment.number("") == -1


@pytest.mark.parametrize("damage", ["pointer", "posting", "term", "order", "dtype", "unsorted terms"])
def test_damaged_segment_arrays_are_refused(damage) -> None:
    index = BM25Index()
    index.add_many(HAND_CORPUS.items())
    index.compact()
    arrays = {name: array.copy() for name, array in index.segment.arrays().items()}
    terms = list(index.segment.terms)
    if damage == "unsorted terms":
        terms[0], terms[1] = terms[1], terms[0]
    elif damage == "pointer":
        arrays["term_ptr"][1] = 10_000
    elif damage == "posting":
        arrays["post_doc"][0] = 99
    elif damage == "term":
        arrays["doc_terms"][0] = -1
    elif damage == "order":
        arrays["doc_ids"] = arrays["doc_ids"][::-1].copy()
    else:
        arrays["post_tf"] = arrays["post_tf"].astype(np.float64)
    with pytest.raises(ValueError):
        FrozenSegment.from_arrays(terms, arrays)


@pytest.mark.parametrize("where", ["first", "last"])
def test_postings_are_checked_block_by_block_dropping_the_pages_read(where, monkeypatch) -> None:
    # Read back from a mapped file, a segment's postings are checked a block at a time, the file's pages dropped
    # after each block; a bad posting in any block is still found.
    monkeypatch.setattr(bm25_segment, "CHECK_BLOCK", 4)
    index = BM25Index()
    index.add_many(HAND_CORPUS.items())
    index.compact()
    arrays = {name: array.copy() for name, array in index.segment.arrays().items()}
    postings = len(arrays["post_doc"])
    released = []
    FrozenSegment.from_arrays(list(index.segment.terms), arrays, lambda: released.append(1))
    # Two columns of postings, each in blocks of four.
    assert len(released) == 2 * -(-postings // 4)
    arrays["post_doc"][0 if where == "first" else postings - 1] = -1
    with pytest.raises(ValueError, match="outside"):
        FrozenSegment.from_arrays(list(index.segment.terms), arrays, lambda: None)


@pytest.mark.parametrize("seed", range(6))
def test_a_segment_made_by_counting_equals_the_sorted_one(seed, monkeypatch) -> None:
    # A refresh's batches (ascending ids, some documents removed, batches joined) give each term's postings in
    # the order of their documents: counting places them, in blocks smaller than a batch, exactly where the
    # sort of one key per posting does. A document added alone with an id among the batches' breaks that
    # order, and the sort is used.
    rng = random.Random(seed)
    monkeypatch.setattr(bm25_segment, "SORT_BLOCK", rng.choice([3, 7, 1 << 20]))
    vocabulary = [f"w{i}" for i in range(40)] + ["Zeta", "alpha", "ärger"]
    mutable = MutableBM25()
    next_id = 0
    for _ in range(rng.randint(1, 12)):
        docs = {}
        for _ in range(rng.randint(1, 9)):
            docs[next_id] = rng.choices(vocabulary, k=rng.randint(0, 10))
            next_id += 2
        mutable.add_many(docs.items())
    for doc_id in rng.sample(range(0, next_id, 2), min(3, next_id // 2)):
        mutable.remove(doc_id)
    interleaved = seed % 2 == 1
    if interleaved:
        mutable.add(1, ["alpha", "w1", "w1"])
    counted_calls = []
    counted = bm25_segment._counted
    monkeypatch.setattr(bm25_segment, "_counted", lambda *args: counted_calls.append(result := counted(*args))
                        or result)
    made = bm25_segment._added(mutable)
    assert (counted_calls[0] is None) == interleaved
    monkeypatch.setattr(bm25_segment, "_counted", lambda *args: None)
    sorted_ = bm25_segment._added(mutable)
    assert made[0] == sorted_[0]
    assert made[1].keys() == sorted_[1].keys()
    for name, array in sorted_[1].items():
        assert made[1][name].dtype == array.dtype and np.array_equal(made[1][name], array), name


def test_the_mutable_part_gives_its_postings_with_tombstones_at_the_graveyard() -> None:
    # Documents added in bulk and one by one, some of each removed: every live posting is handed over once.
    mutable = MutableBM25()
    mutable.add_many(HAND_CORPUS.items())
    extra = {6: ["ledger", "audit", "audit"], 7: ["limiter"]}
    for doc_id, tokens in extra.items():
        mutable.add(doc_id, tokens)
    for doc_id in (2, 4, 7):
        mutable.remove(doc_id)
    terms, blocks = mutable.all_postings()
    term_of, slots, tfs = (np.concatenate(column) for column in zip(*blocks))
    # Nothing changes: a save that fails to write its merged segment keeps every document.
    again_terms, again = mutable.all_postings()
    assert again_terms == terms and all(np.array_equal(np.concatenate(a), b)
                                        for a, b in zip(zip(*again), (term_of, slots, tfs)))
    assert mutable._batches and len(mutable) == len(HAND_CORPUS) + len(extra) - 3
    assert len(set(terms)) == len(terms)
    slot_ids, ids, _ = mutable.documents()
    id_of_slot = dict(zip(slot_ids.tolist(), ids.tolist()))
    exported = sorted((terms[n], id_of_slot[slot], tf)
                      for n, slot, tf in zip(term_of.tolist(), slots.tolist(), tfs.tolist()) if slot != 0)
    expected = sorted((term, doc_id, float(tokens.count(term))) for doc_id, tokens in {**HAND_CORPUS, **extra}.items()
                      if doc_id not in (2, 4, 7) for term in set(tokens))
    assert exported == expected
    # The documents removed from the bulk part left tombstones; the one added alone took its only term along.
    assert slots.tolist().count(0) == len(set(HAND_CORPUS[2])) + len(set(HAND_CORPUS[4]))


def test_a_query_asked_before_and_after_each_edit_matches_the_rebuilt_reference() -> None:
    # The index remembers recent queries' scores; every kind of edit must make it forget them.
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(30)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    query = ["w1", "w3", "w7"]
    index = BM25Index()
    docs: dict[int, list[str]] = {}
    for doc_id in range(40):
        docs[doc_id] = zipf_doc(rng, vocabulary, weights)
    index.add_many(docs.items())
    for step in range(60):
        assert_matches_okapi(index, docs, query)
        doc_id = rng.randrange(50)
        if step % 7 == 6:
            index.compact()
        elif doc_id in docs and step % 2:
            index.remove(doc_id)
            del docs[doc_id]
        else:
            docs[doc_id] = zipf_doc(rng, vocabulary, weights)
            index.replace(doc_id, docs[doc_id])
    assert_matches_okapi(index, docs, query)


@pytest.mark.parametrize("slack", [0, 1024])
def test_score_arrays_reused_after_being_forgotten_leave_remembered_scores_intact(monkeypatch, slack) -> None:
    # ``prepare`` makes the arrays the remembered queries fill; a query the memo forgets hands its array to the
    # next one, and an edit hands over all of them. Whatever is reused, every score is a fresh index's, asked
    # again (from the memo) or anew, before and after edits that add documents beyond an array's room.
    monkeypatch.setattr(bm25_index, "MIN_SLACK", slack)
    monkeypatch.setattr(bm25_index, "SLACK_SHARE", 0.0)
    rng = random.Random(3)
    vocabulary, weights, docs = zipf_corpus(rng, 30, 50)
    index = BM25Index()
    index.add_many(docs.items())
    index.compact()
    index.prepare()
    prepared = {id(spare) for spare, _ in index._spares}
    assert len(prepared) == bm25_index.MEMO_QUERIES + 1
    queries = [rng.choices(vocabulary, k=rng.randint(1, 4)) for _ in range(3 * bm25_index.MEMO_QUERIES)]
    for step, query in enumerate(queries):
        for asked in (query, queries[max(step - 3, 0)], query + ["w2"]):
            fresh = build(docs)
            assert index.scores(asked) == fresh.scores(asked)
            assert index.top_k(asked, 7) == fresh.top_k(asked, 7)
        if step == 3:
            # Until the first edit, every remembered query's scores lie in a prepared array (the memo is full).
            assert len(index._memo) == bm25_index.MEMO_QUERIES
            assert {id(scores.base) for scores, _ in index._memo.values()} <= prepared
        if step % 5 == 4:
            doc_id = 100 + step
            docs[doc_id] = zipf_doc(rng, vocabulary, weights)
            index.add(doc_id, docs[doc_id])


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.integers(0, 30), st.lists(st.sampled_from("abcdefgh"), max_size=8), max_size=12),
    st.sets(st.integers(0, 30)),
    st.dictionaries(st.integers(0, 30), st.lists(st.sampled_from("efghijk"), max_size=8), max_size=8),
    st.booleans(),
    st.sampled_from([1, 2, 5, bm25_segment.PIECE]),
)
def test_a_merge_lays_out_every_live_document_whether_or_not_the_new_ids_come_after(
        before, removed, added, after, piece) -> None:
    # A refresh's new documents have ids above every segment row (merged by appending, no sort, in pieces of
    # about ``PIECE`` postings); others, such as a test's or a replaced document's, may fall between them
    # (merged by sorting every posting). Both give the one layout of the live documents, derived from the
    # documents alone, in memory and written to a snapshot in pieces.
    if after:
        added = {doc_id + 31: tokens for doc_id, tokens in added.items()}
    else:
        added = {doc_id: tokens for doc_id, tokens in added.items() if doc_id not in before or doc_id in removed}
    index = BM25Index()
    index.add_many(before.items())
    index.compact()
    for doc_id in sorted(removed & set(before)):
        index.remove(doc_id)
    index.add_many(added.items())
    taken: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bm25_segment, "PIECE", piece)
        written = BM25Index(segment=stored_segment(index))
        for name in ("_appended", "_interleaved"):
            original = getattr(bm25_segment, name)
            patch.setattr(bm25_segment, name, lambda *parts, name=name, original=original: (
                taken.append(name), original(*parts))[1])
        index.compact()
    docs = {**{doc_id: tokens for doc_id, tokens in before.items() if doc_id not in removed}, **added}
    assert_segment_layout(index.segment, docs)
    assert_segment_layout(written.segment, docs)
    live = [doc_id for doc_id in before if doc_id not in removed]
    if not added and not removed & set(before):
        assert taken == []
    elif live and (not added or max(live) < min(added)):
        assert taken == ["_appended"]
    elif live:
        assert taken == ["_interleaved"]
    if any(docs.values()):
        assert_matches_okapi(index, docs, ["a", "e", "h", "k"])


@pytest.mark.parametrize(("budget", "share"), [(0, 1), (40, 1), (1 << 22, 1), (1 << 22, 8)])
def test_remembered_terms_score_like_a_fresh_index_within_their_budget(monkeypatch, budget, share) -> None:
    # A term's contributions are kept for later queries (the least recently used dropped past the budget, a
    # term larger than it never kept) until an edit: every score equals a fresh index's, to the bit.
    monkeypatch.setattr(bm25_index, "TERM_MEMO_POSTINGS", budget)
    monkeypatch.setattr(bm25_index, "TERM_MEMO_SHARE", share)
    rng = random.Random(7)
    vocabulary, weights, docs = zipf_corpus(rng, 30, 60)
    index = BM25Index()
    index.add_many(docs.items())
    index.compact()
    for step in range(40):
        query = rng.choices(vocabulary, weights, k=rng.randint(1, 5))
        fresh = build(docs)
        assert index.scores(query) == fresh.scores(query)
        assert index.top_k(query, 9) == fresh.top_k(query, 9)
        held = sum(len(slots) for slots, _, _ in index._terms.values())
        assert held <= min(budget, len(index.segment.post_doc) // share)
        if budget == 1 << 22 and share == 1:
            assert set(query) <= set(index._terms) | {term for term in query if not index.df(term)}
        if step % 6 == 5:
            doc_id = 500 + step
            docs[doc_id] = zipf_doc(rng, vocabulary, weights)
            index.add(doc_id, docs[doc_id])
            assert not index._terms
    # The least recently used go first: after an edit, terms asked one by one are kept whenever the last fits
    # the budget alone, and what is kept is the last ones asked (no document is removed here, so a term's
    # postings are its documents).
    index.add(999, ["w1"])
    asked = [term for term in vocabulary if index.df(term)]
    for position, term in enumerate(asked):
        index.scores([term])
        if index.df(term) <= min(budget, len(index.segment.post_doc) // share):
            assert term in index._terms
            assert list(index._terms) == asked[position + 1 - len(index._terms):position + 1]


def test_compacting_an_already_compact_index_keeps_its_segment() -> None:
    index = BM25Index()
    index.add_many(HAND_CORPUS.items())
    assert index.compact()
    segment = index.segment
    assert not index.compact() and index.segment is segment
    index.remove(3)
    assert index.compact() and index.segment is not segment
    assert_segment_layout(index.segment, {doc_id: tokens for doc_id, tokens in HAND_CORPUS.items() if doc_id != 3})


def test_batches_of_one_size_are_joined_and_still_score_and_edit_like_the_reference(monkeypatch) -> None:
    # One document per batch: 200 batches become a few joined ones (levels of 8), which removals then search.
    monkeypatch.setattr(bm25, "_BATCH_TOKENS", 1)
    rng = random.Random(11)
    vocabulary, _, docs = zipf_corpus(rng, 60, 200)
    index = BM25Index()
    index.add_many(docs.items())
    held = index.mutable._batches._batches
    assert len(held) < 16 and {batch.level for batch in held} >= {2}
    for doc_id in rng.sample(sorted(docs), 50):
        assert index.mutable.shared_terms(doc_id, vocabulary) == set(docs[doc_id])
        index.remove(doc_id)
        del docs[doc_id]
    for _ in range(10):
        assert_matches_okapi(index, docs, rng.sample(vocabulary, 4))
    index.compact()
    assert_segment_layout(index.segment, docs)
