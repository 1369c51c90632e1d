"""The paths strategy: files and directories the message names, resolved by path suffix."""

from __future__ import annotations

import pytest
from strategy_helpers import chunk_name, context_for, heaviest

from rag_lsp.retrieval.strategies import paths
from rag_lsp.retrieval.strategies.base import Skipped

REPO = {
    "pydicom/jsonrep.py": "def convert_to_python(value):\n    return value\n\n\ndef from_json(data):\n"
                          + "    x = 1\n" * 10 + "    return data\n",
    "pydicom/dataset.py": "class Dataset:\n    pass\n",
    "pydicom/util/__init__.py": "",
    "pydicom/util/codify.py": "def code_file(path):\n    return path\n",
    "pydicom/util/dump.py": "def print_character(ordchr):\n    return ordchr\n",
    "tests/__init__.py": "",
    "setup.py": "from setuptools import setup\n",
    ".env": "SECRET=1\n",
}


def test_a_file_named_in_prose_with_a_line(tmp_path):
    ctx = context_for(tmp_path, REPO, "The problem is in `jsonrep.py` at line 12. I plan on submitting a fix.")
    found = paths.run(ctx)
    assert [f.path for f in found] == ["pydicom/jsonrep.py"]
    assert found[0].line == 12 and chunk_name(ctx, found[0]) == "from_json"
    assert found[0].in_prose and found[0].reason == "names the path jsonrep.py:12"


def test_a_github_link_resolves_by_its_longest_suffix(tmp_path):
    text = "See https://github.com/pydicom/pydicom/blob/3746878d8e/pydicom/util/codify.py#L1 for the cause."
    found = paths.run(context_for(tmp_path, REPO, text))
    assert heaviest(found) == {"pydicom/util/codify.py": pytest.approx(0.9)}


def test_a_bare_name_shared_by_many_files_counts_less(tmp_path):
    found = heaviest(paths.run(context_for(tmp_path, REPO, "Something is wrong in __init__.py")))
    assert set(found) == {"pydicom/util/__init__.py", "tests/__init__.py"}
    assert max(found.values()) < 0.9


def test_a_longer_foreign_path_that_only_shares_the_file_name_is_weak(tmp_path):
    found = heaviest(paths.run(context_for(tmp_path, REPO, "crash in /opt/other/project/setup.py")))
    assert found["setup.py"] == pytest.approx(0.9)  # The workspace file is matched whole.
    found = heaviest(paths.run(context_for(tmp_path / "b", REPO, "crash in /opt/other/lib/dataset.py")))
    assert found["pydicom/dataset.py"] < 0.5


def test_a_bare_name_that_repeats_the_reporters_own_path_names_no_file_here(tmp_path):
    # ``src/project/__init__.py`` is the reporter's file: "missing __init__.py" then means it, not ours.
    text = ("Unable to load file src/project/__init__.py when the package has no __init__.py, "
            "see jsonrep.py")
    found = heaviest(paths.run(context_for(tmp_path, REPO, text)))
    assert found["pydicom/jsonrep.py"] == pytest.approx(0.9)
    assert max(found[path] for path in ("pydicom/util/__init__.py", "tests/__init__.py")) < 0.5
    # Written bare alone, the name still points at the workspace's namesakes.
    alone = heaviest(paths.run(context_for(tmp_path / "b", REPO, "a missing __init__.py breaks loading")))
    assert alone["tests/__init__.py"] > 0.5


def test_a_directory_spreads_over_its_files(tmp_path):
    found = heaviest(paths.run(context_for(tmp_path, REPO, "the helpers under pydicom/util/ are slow")))
    assert set(found) == {"pydicom/util/__init__.py", "pydicom/util/codify.py", "pydicom/util/dump.py"}
    assert all(weight < 0.9 for weight in found.values())


def test_the_reporters_own_directory_does_not_name_a_namesake_folder(tmp_path):
    # ``~/.cache/util`` shares only its last folder with ``pydicom/util``: a directory on the reporter's machine.
    for text in ("'/home/user/.cache/util' is empty", "no config in /etc/util/"):
        assert paths.run(context_for(tmp_path / str(len(text)), REPO, text)) == []
    # Two folders of the suffix, or the whole written path, still name it.
    for text in ("see /home/user/src/pydicom/util/ for the helpers", "the helpers under /util/ are slow"):
        found = heaviest(paths.run(context_for(tmp_path / str(len(text)), REPO, text)))
        assert set(found) == {"pydicom/util/__init__.py", "pydicom/util/codify.py", "pydicom/util/dump.py"}


def test_paths_climbing_out_of_the_workspace_and_secrets_are_dropped(tmp_path):
    ctx = context_for(tmp_path, REPO, "read ../../../etc/passwd and ../setup.py and .env please")
    assert paths.run(ctx) == []


def test_nothing_path_like_is_a_skip(tmp_path):
    with pytest.raises(Skipped):
        paths.run(context_for(tmp_path, REPO, "the dataset cannot be saved"))


def test_an_absolute_path_under_the_root_is_exact_and_may_not_climb_out(tmp_path):
    root = tmp_path / "ws"
    ctx = context_for(root, REPO, f"see {root}/pydicom/dataset.py and {root}/../ws2/setup.py")
    assert heaviest(paths.run(ctx)) == {"pydicom/dataset.py": pytest.approx(0.9)}
