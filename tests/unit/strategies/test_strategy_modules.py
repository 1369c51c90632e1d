"""The modules strategy: qualified names to the files their module part names, in several languages."""

from __future__ import annotations

import pytest
from strategy_helpers import context_for, heaviest

from rag_lsp.retrieval.strategies import modules
from rag_lsp.retrieval.strategies.base import Skipped

REPO = {
    "pvlib/__init__.py": "from pvlib import irradiance\n",
    "pvlib/irradiance.py": "def reindl(surface_tilt, ghi):\n    return ghi / surface_tilt\n",
    "pvlib/iam.py": "def physical(aoi, n=1.526):\n    return aoi\n",
    "pvlib/tools.py": "def cosd(x):\n    return x\n",
    "src/main/java/com/acme/orders/Orders.java": "package com.acme.orders;\n\npublic class Orders {}\n",
    "src/main/java/com/acme/billing/Orders.java": "package com.acme.billing;\n\npublic class Orders {}\n",
    "src/sync/broadcast.rs": "pub fn channel() {}\n",
    "src/sync/mod.rs": "pub mod broadcast;\n",
}


def test_a_dotted_python_name_names_its_module(tmp_path):
    found = modules.run(context_for(tmp_path, REPO, "pvlib.irradiance.reindl() model generates NaNs when GHI = 0"))
    assert heaviest(found) == {"pvlib/irradiance.py": pytest.approx(0.75)}
    assert found[0].in_prose and found[0].reason == "module path `pvlib.irradiance.reindl`"


def test_a_java_package_picks_the_right_file_among_namesakes(tmp_path):
    found = heaviest(modules.run(context_for(tmp_path, REPO, "NullPointerException in com.acme.orders.Orders")))
    assert set(found) == {"src/main/java/com/acme/orders/Orders.java"}
    assert found["src/main/java/com/acme/orders/Orders.java"] == pytest.approx(0.85)


def test_a_rust_path_skips_the_layout_directory(tmp_path):
    found = heaviest(modules.run(context_for(tmp_path, REPO, "lagging receivers in crate::sync::broadcast")))
    assert set(found) == {"src/sync/broadcast.rs"}


def test_a_package_names_every_file_under_it_so_it_says_less(tmp_path):
    found = heaviest(modules.run(context_for(tmp_path, REPO, "`pvlib.__version__` is 0.9.5")))
    assert found["pvlib/__init__.py"] < 0.5


def test_names_only_in_pasted_code_count_less(tmp_path):
    prose = heaviest(modules.run(context_for(tmp_path, REPO, "pvlib.iam.physical returns nan")))
    pasted = "it fails:\n```python\npvlib.iam.physical(aoi=100, n=1)\n```"
    code = heaviest(modules.run(context_for(tmp_path / "b", REPO, pasted)))
    assert code["pvlib/iam.py"] == pytest.approx(prose["pvlib/iam.py"] / 2)


def test_receivers_and_unqualified_names_are_not_modules(tmp_path):
    with pytest.raises(Skipped):
        modules.run(context_for(tmp_path, REPO, "self.results.ac is empty; reindl returns nan"))


def test_a_backticked_word_no_definition_has_names_the_module_file_named_for_it(tmp_path):
    found = modules.run(context_for(tmp_path, REPO, "the `iam` module lacks a refraction model"))
    assert heaviest(found) == {"pvlib/iam.py": pytest.approx(0.7)}
    assert found[0].reason == "module `iam`"
    # A word a definition has is the symbols strategy's, and a word in plain prose names nothing here.
    for text in ("the `physical` model is wrong", "the iam module lacks a refraction model"):
        with pytest.raises(Skipped):
            modules.run(context_for(tmp_path / str(len(text)), REPO, text))
    # A word most of the code says (the project's own name) is a weak pointer to the file named for it.
    tree = {"src/jq.h": "typedef struct jq_state jq_state;\n",
            **{f"src/part{i}.c": f"int part{i}(jq_state *jq) {{\n  return {i};\n}}\n" for i in range(6)}}
    project = heaviest(modules.run(context_for(tmp_path / "jq", tree, "`jq` should stop at `--`")))
    assert set(project) == {"src/jq.h"} and project["src/jq.h"] < 0.35


def test_a_dotted_product_name_is_not_a_module_and_its_member(tmp_path):
    tree = {"lua/lazy/init.lua": "local M = {}\nfunction M.setup(opts)\n  return opts\nend\nreturn M\n",
            "lua/lazy/pkg/lazy.lua": "return { source = 'lazy' }\n"}
    # ``lazy.nvim`` is the plugin's name: no code says ``nvim``, so it is no member of a module ``lazy``.
    assert not modules.run(context_for(tmp_path / "a", tree, "how lazy.nvim checks for plugin updates"))
    # ``lazy.setup`` is: the code defines ``setup``.
    found = heaviest(modules.run(context_for(tmp_path / "b", tree, "lazy.setup ignores its options")))
    assert "lua/lazy/pkg/lazy.lua" in found
