"""The discovery strategy: the fallback matching the message's words against rare path words."""

from __future__ import annotations

import pytest
from strategy_helpers import context_for, heaviest

from rag_lsp.retrieval.strategies import discovery
from rag_lsp.retrieval.strategies.base import Finding, Skipped

REPO = {f"src/sqlfluff/rules/L0{n:02d}.py": f"class Rule_L0{n:02d}:\n    pass\n" for n in range(10, 40)}
REPO.update({"src/sqlfluff/core/linter.py": "def lint(sql):\n    return sql\n",
             "src/sqlfluff/core/templater.py": "def render(sql):\n    return sql\n"})


def test_a_rare_path_word_points_at_its_file(tmp_path):
    found = discovery.run(context_for(tmp_path, REPO, "TSQL - L031 incorrectly triggers when no join is present"))
    weights = heaviest(found)
    assert set(weights) == {"src/sqlfluff/rules/L031.py"}
    assert found[0].reason == "'l031' is in its path"


def test_title_words_count_most_then_prose_then_pasted_code(tmp_path):
    def weight(name: str, text: str) -> float:
        found = heaviest(discovery.run(context_for(tmp_path / name, REPO, text)))
        return found["src/sqlfluff/core/templater.py"]
    title = weight("a", "the templater drops a line")
    prose = weight("b", "A line is dropped\nIt happens in the templater.")
    code = weight("c", "A line is dropped:\n```\n$ templater x\n```")
    assert (prose, code) == (pytest.approx(title / 2), pytest.approx(title / 4))


def test_it_stays_out_when_something_reliable_was_found(tmp_path):
    ctx = context_for(tmp_path, REPO, "L031 triggers wrongly")
    ctx.findings.append(Finding("src/sqlfluff/core/linter.py", "stack_trace", "x", 0.9, "stack frame"))
    with pytest.raises(Skipped, match="reliable"):
        discovery.run(ctx)
