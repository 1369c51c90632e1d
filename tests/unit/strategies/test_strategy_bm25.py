"""The bm25 strategy: each file's best chunk, weighted relative to the best score."""

from __future__ import annotations

import pytest
from strategy_helpers import chunk_name, context_for

from rag_lsp.retrieval.strategies import bm25
from rag_lsp.retrieval.strategies.base import Skipped

REPO = {
    "pvlib/irradiance.py": '''def reindl(surface_tilt, dhi, ghi, dni):
    """Sky diffuse irradiance with the Reindl model; term3 divides by ghi."""
    term3 = 1 + (dni / ghi) ** 0.5
    return dhi * term3


def klucher(surface_tilt, dhi, ghi):
    return dhi
''',
    "pvlib/clearsky.py": "def ineichen(apparent_zenith):\n    return apparent_zenith\n",
}


def test_each_file_once_with_its_best_chunk_and_the_matching_terms(tmp_path):
    ctx = context_for(tmp_path, REPO, "The reindl function should give zero sky diffuse when GHI is zero")
    found = bm25.run(ctx)
    assert [f.path for f in found] == ["pvlib/irradiance.py"]
    assert chunk_name(ctx, found[0]) == "reindl"
    assert found[0].weight == pytest.approx(0.5)
    assert found[0].reason.endswith("matches diffuse, ghi, reindl, sky")


def test_a_message_without_shared_words_is_a_skip(tmp_path):
    with pytest.raises(Skipped):
        bm25.run(context_for(tmp_path, REPO, "qwerty zxcvb"))
