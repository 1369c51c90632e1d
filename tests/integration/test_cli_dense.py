"""``rag-lsp context`` with dense vectors from the operator file and the enhancement knobs on the command line:
a real subprocess, wordllama's real weights."""

from __future__ import annotations

from pathlib import Path

from test_cli import context_json, run


def test_the_operator_file_turns_vectors_on_and_the_answer_says_when_they_are_ready(ledger_root: Path, tmp_path):
    (ledger_root / ".rag-lsp.toml").write_text('[retrieval.dense]\nbackend = "wordllama"\n\n'
                                               '[retrieval.enhancements]\nexpand = { default = 1, max = 2 }\n')
    cache = str(tmp_path / "cache")
    cold = context_json(ledger_root, "convert an amount of money to euros", "--cache-dir", cache)
    assert cold["items"] and cold["retrieval"]["mode"] in ("lexical", "hybrid-rrf")
    if cold["retrieval"]["mode"] == "lexical":
        assert cold["retrieval"]["reason"].startswith("vectors not ready")
    warm = context_json(ledger_root, "convert an amount of money to euros", "--cache-dir", cache,
                        "--wait-vectors", "60", "--expand", "9", "--no-rerank")
    assert warm["retrieval"]["mode"] == "hybrid-rrf" and warm["retrieval"]["reason"] is None
    vectors = warm["retrieval"]["roots"][0]["vectors"]
    assert vectors["backend"] == "wordllama:l2_supercat:256" and vectors["embedded"] == warm["index"]["chunks"]
    expand, rerank = warm["retrieval"]["enhancements"]["expand"], warm["retrieval"]["enhancements"]["rerank"]
    assert (expand["value"], expand["requested"], expand["source"]) == (2, 9, "request")
    assert (rerank["value"], rerank["method"]) == (False, "off")
    assert list((tmp_path / "cache").rglob("vectors.sqlite"))
    text = run("context", "convert an amount of money to euros", "--root", str(ledger_root), "--cache-dir", cache,
               "--wait-vectors", "60")
    assert text.returncode == 0 and "; hybrid-rrf" in text.stdout


def test_a_bad_retrieval_setting_is_reported_not_applied(ledger_root: Path, tmp_path):
    (ledger_root / ".rag-lsp.toml").write_text('[retrieval.dense]\nbackend = "bert"\n')
    result = run("context", "convert", "--root", str(ledger_root), "--json", "--no-cache")
    assert result.returncode == 0
    assert "retrieval.dense.backend' must be one of none, wordllama, model2vec, openai" in result.stderr
