"""The collector's settings for a process that holds an index: paused during bulk builds, run less often while
answering."""

import gc

import pytest

from rag_lsp.gc_pause import YOUNG_THRESHOLD, paused_gc, tune_for_answers


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


@pytest.mark.parametrize(("before", "after"), [
    ((700, 10, 10), (YOUNG_THRESHOLD, 10, 10)),
    ((700, 5, 20), (YOUNG_THRESHOLD, 5, 20)),
    ((YOUNG_THRESHOLD * 2, 10, 10), (YOUNG_THRESHOLD * 2, 10, 10)),
    ((0, 10, 10), (0, 10, 10)),
])
def test_answering_raises_the_first_threshold_and_keeps_a_hosts_higher_one(thresholds, before, after):
    gc.set_threshold(*before)
    tune_for_answers()
    assert gc.get_threshold() == after


def test_a_pause_restores_the_collector_and_leaves_one_switched_off_by_the_host_off():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
