"""The bundle: task classification, templates, real token counts, summaries, relations, sufficiency, known files,
provenance and the prompt block, on a small workspace with callers, tests, docs and configuration."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace

import pytest
from conftest import write_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lsp.index.enclosing import ON_IMPORT, TOP_LEVEL, innermost_by_scan, outline, owners
from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import IndexSymbolProvider
from rag_lsp.index.tables import workspace_tables
from rag_lsp.model import Definition
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.retrieval.bundle.classify import classify
from rag_lsp.retrieval.bundle.prompt_block import prompt_block
from rag_lsp.retrieval.bundle.provenance import CheckoutWatch, read_checkout
from rag_lsp.retrieval.bundle.sufficiency import sufficiency
from rag_lsp.retrieval.bundle.templates import RELATION_SECTIONS, TASK_TYPES, Template, task_table, template
from rag_lsp.retrieval.bundle.tokenizers import tokenizer
from rag_lsp.retrieval.retrieve import retrieve
from rag_lsp.server import wire

SHOP = {
    "shop/ledger.py": '''"""Double-entry ledger."""
from shop.currency import convert


class Ledger:
    """Keeps one account per currency, so that every posting is converted to euros before it is stored."""

    def __init__(self):
        self.accounts = {}

    def post(self, entry):
        """Post an entry; the account must exist for its currency, else the ledger raises KeyError."""
        account = self.accounts[entry.currency]
        account.append(convert(entry.amount, entry.currency))
''',
    "shop/currency.py": '''RATES = {"EUR": 1.0, "USD": 0.9}


def convert(amount, currency):
    """Convert an amount to euros using RATES."""
    return amount * RATES[currency]
''',
    "shop/cart.py": '''from shop.ledger import Ledger


def checkout(ledger, entry):
    """Close a cart by posting its entry."""
    ledger.post(entry)


def refund(ledger, entry):
    ledger.post(entry)
''',
    "tests/test_ledger.py": '''from shop.ledger import Ledger


def test_post_needs_an_account():
    ledger = Ledger()
    ledger.post(None)
''',
    "docs/ledger.md": "# Ledger\n\nThe `Ledger` keeps one account per currency; `post` raises KeyError otherwise.\n",
    "config/shop.yaml": "ledger:\n  class: Ledger\n  currency: EUR\n",
}
DEBUG = "why does Ledger.post raise KeyError"


@pytest.fixture
def shop(tmp_path):
    index = Index(write_tree(tmp_path / "ws", SHOP), use_cache=False)
    index.refresh()
    return index


# Classification.


@pytest.mark.parametrize(("question", "expected"), [
    (DEBUG, "debug"),
    ("how does the ledger convert currencies", "explain"),
    ("add a refund command to the cart", "extend"),
    ("review the checkout change for race conditions", "review"),
    ("where is the exchange rate table defined", "locate"),
    ("ledger currency", "general"),
])
def test_questions_are_classified_by_their_patterns(question, expected):
    assert classify(question).task_type == expected


def test_confidence_is_the_score_over_half_the_total_raised_by_the_gap():
    total = sum(entry["weight"] for entry in task_table()["locate"]["patterns"])
    # "find" alone: one locate pattern of weight 10, nothing else matches; the gap to the runner-up is all of it.
    assert classify("find it").confidence == round(min(1.0, 10 / (0.5 * total) * 1.3), 2)
    nothing = classify("ledger currency")
    assert (nothing.task_type, nothing.confidence, nothing.source) == ("general", 0.0, "classified")


def test_a_close_runner_up_raises_confidence_less():
    alone, contested = classify("find it"), classify("find the bug")
    assert contested.task_type == "debug" and alone.confidence >= contested.confidence > 0


def test_every_template_loads_with_source_before_its_relationship_lists():
    for name in TASK_TYPES:
        chosen = template(name)
        assert chosen.sections and "source" in chosen.sections
        relations = [chosen.sections.index(s) for s in chosen.sections if s in RELATION_SECTIONS]
        assert all(position > chosen.sections.index("source") for position in relations)
    assert template("debug").boost("source") == 2.0 and template("debug").boost("tests") == 1.0


# Token counts.


def test_real_tokenizers_count_as_tiktoken_does():
    cl100k, o200k = tokenizer("cl100k"), tokenizer("o200k")
    assert (cl100k.name, o200k.name) == ("cl100k", "o200k")
    # Counts from the reference encodings: the two differ on this text.
    text = "    def __init__(self):\n        self.accounts = {}\n"
    assert cl100k.count("hello world") == o200k.count("hello world") == 2
    assert cl100k.count(text) != tokenizer("estimate").count(text)
    assert tokenizer("no such encoding").name == "estimate"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="abc def(){}:=\t", max_size=30), max_size=12), st.integers(0, 40))
def test_a_cut_keeps_whole_lines_within_the_budget(lines, budget):
    counter = tokenizer("cl100k")
    text = "\n".join(lines)
    cut = counter.truncate(text, budget)
    assert counter.count(cut) <= budget or cut == text
    assert text.startswith(cut) and (cut in ("", text) or text[len(cut)] == "\n")


# Packing.


@pytest.mark.parametrize("mode", ["task", "ranked"])
@pytest.mark.parametrize("task_type", TASK_TYPES)
@pytest.mark.parametrize("budget", [40, 150, 600, 4000])
def test_a_bundle_never_exceeds_its_budget(shop, mode, task_type, budget):
    answer = retrieve(shop, ContextRequest(DEBUG, top_k=3, budget_tokens=budget, task_type=task_type, mode=mode))
    counter = tokenizer("cl100k")
    assert answer.tokens <= budget and answer.token_count == "cl100k"
    for item in answer.items:
        assert counter.count(item.content) <= item.tokens


def test_a_debug_bundle_holds_the_code_its_callers_and_its_tests(shop):
    answer = retrieve(shop, ContextRequest(DEBUG, top_k=3))
    assert (answer.task.task_type, answer.mode) == ("debug", "task")
    post = next(item for item in answer.items if item.qualname == "Ledger.post")
    assert post.section == "source" and post.shown == "source" and "self.accounts[" in post.content
    assert [c.qualname for c in post.callers] == ["checkout", "refund", "test_post_needs_an_account"]
    assert {c.source for c in post.callers} == {"tree-sitter"} and post.callers_total == 3
    assert [c.qualname for c in post.callees] == ["convert"]
    assert any(item.section == "tests" and item.path == "tests/test_ledger.py" for item in answer.items)
    names = [s.name for s in answer.sections]
    assert names == list(template("debug").sections)
    assert {s.name for s in answer.sections if s.entries} >= {"source", "callers", "callees", "tests"}
    # The relationship lists are counted in their owner's tokens.
    assert sum(s.tokens for s in answer.sections) == answer.tokens


def test_minimal_explain_shows_summaries_and_debug_the_code(shop):
    explain = retrieve(shop, ContextRequest("explain how Ledger.post works", top_k=3, verbosity="minimal"))
    post = next(item for item in explain.items if item.qualname == "Ledger.post")
    assert explain.task.task_type == "explain" and post.shown == "summary"
    assert post.content.startswith("    def post(self, entry):") and "self.accounts[" not in post.content
    assert '"""Post an entry' in post.content
    debug = retrieve(shop, ContextRequest(DEBUG, top_k=3, verbosity="minimal"))
    assert next(i for i in debug.items if i.qualname == "Ledger.post").shown == "source"


def test_a_summary_after_an_edit_shows_the_edited_signature(shop):
    question = ContextRequest("explain how Ledger.post works", top_k=3, verbosity="minimal")
    before = next(item for item in retrieve(shop, question).items if item.qualname == "Ledger.post")
    assert before.content.startswith("    def post(self, entry):")
    edited = SHOP["shop/ledger.py"].replace("def post(self, entry):", "def post(self, entry, strict=True):")
    shop.set_file("shop/ledger.py", edited)
    after = next(item for item in retrieve(shop, question).items if item.qualname == "Ledger.post")
    assert after.content.startswith("    def post(self, entry, strict=True):")


def test_raw_source_takes_at_most_half_the_budget(shop):
    answer = retrieve(shop, ContextRequest(DEBUG, top_k=6, budget_tokens=120))
    raw = sum(item.tokens - _list_tokens(item) for item in answer.items
              if item.shown == "source" and item.section in ("source", "tests", "callees"))
    assert raw <= 60 and answer.tokens <= 120


def _list_tokens(item) -> int:
    from rag_lsp.retrieval.bundle.sections import relation_text

    counter = tokenizer("cl100k")
    return sum(counter.count(relation_text(kind, item.qualname or item.path, found, total)) for kind, found, total
               in (("callers", item.callers, item.callers_total), ("callees", item.callees, item.callees_total))
               if found)


def test_ranked_mode_is_the_places_by_score_without_sections(shop):
    answer = retrieve(shop, ContextRequest(DEBUG, top_k=3, mode="ranked"))
    assert answer.mode == "ranked" and answer.sections == ()
    assert all(item.section is None and not item.callers for item in answer.items)
    ranked = [item.score for item in answer.items if item.source == "ranked"]
    assert ranked == sorted(ranked, reverse=True)


# Known files and provenance.


def test_a_known_unchanged_file_is_one_line_and_a_changed_one_is_flagged(shop):
    first = retrieve(shop, ContextRequest(DEBUG, top_k=3))
    post = next(item for item in first.items if item.qualname == "Ledger.post")
    blob = post.blob_id
    assert blob == subprocess.run(["git", "hash-object", "--stdin"], input=(shop.root / post.path).read_bytes(),
                                  capture_output=True, check=True).stdout.decode().strip()
    held = retrieve(shop, ContextRequest(DEBUG, top_k=3, known=((post.path, blob),)))
    again = [item for item in held.items if item.path == post.path]
    assert len(again) == 1 and again[0].content == f"already read, unchanged: {post.path}"
    assert (again[0].shown, again[0].known) == ("unchanged", "unchanged") and held.tokens < first.tokens
    stale = retrieve(shop, ContextRequest(DEBUG, top_k=3, known=((str(shop.root / post.path), "0" * 40),)))
    changed = next(item for item in stale.items if item.path == post.path)
    assert (changed.shown, changed.known) == ("source", "changed") and "self.accounts[" in changed.content


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_checkout_is_read_from_git_and_a_move_is_said_once(tmp_path):
    root = write_tree(tmp_path / "repo", {"a.py": "def a():\n    return 1\n"})

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                              capture_output=True, text=True, check=True).stdout.strip()

    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-qm", "one")
    first = git("rev-parse", "HEAD")
    assert read_checkout(root) == (first, "main")
    assert read_checkout(root / "sub") == (first, "main")
    index = Index(root, use_cache=False)
    watch = CheckoutWatch()
    assert watch.observe(index).moved_from is None
    git("checkout", "-qb", "feature")
    (root / "a.py").write_text("def a():\n    return 2\n")
    git("commit", "-qam", "two")
    git("pack-refs", "--all")
    moved = watch.observe(index)
    assert (moved.commit, moved.branch) == (git("rev-parse", "HEAD"), "feature")
    assert moved.moved_from == f"main@{first[:12]}"
    assert watch.observe(index).moved_from is None
    # An answer says it once, through the process's own watch.
    index.refresh()
    retrieve(index, ContextRequest("a", top_k=1))
    git("checkout", "-q", "main")
    index.refresh()
    said = retrieve(index, ContextRequest("a", top_k=1))
    assert [w for w in said.warnings if "moved from feature@" in w and "to main@" in w]
    assert said.checkouts[0].moved_from is not None and said.items[0].commit == first
    assert not [w for w in retrieve(index, ContextRequest("a", top_k=1)).warnings if "moved" in w]
    git("worktree", "add", "-q", str(tmp_path / "other"), "feature")
    assert read_checkout(tmp_path / "other") == (git("rev-parse", "feature"), "feature")
    assert read_checkout(tmp_path) == (None, None)


# Sufficiency.


def test_sufficiency_is_position_weighted_coverage_with_bonuses():
    chosen = Template("x", ("source", "callers", "tests"), (), True)
    most = 1 + 1 / 2 + 1 / 3 + 0.3
    assert sufficiency(chosen, {"source", "callers", "tests"}, True, 60, 500) == 1.0
    assert sufficiency(chosen, {"source"}, True, 0, 500) == round(1.2 / most, 2)
    assert sufficiency(chosen, {"source", "tests"}, False, 51, 500) == round((1 + 1 / 3 + 0.1) / most, 2)
    assert sufficiency(chosen, {"source"}, True, 0, 99) == round(0.6 / most, 2)
    assert sufficiency(chosen, set(), False, 0, 0) == 0.0


def test_a_larger_budget_is_at_least_as_sufficient(shop):
    small = retrieve(shop, ContextRequest(DEBUG, top_k=3, budget_tokens=60))
    large = retrieve(shop, ContextRequest(DEBUG, top_k=3, budget_tokens=4000))
    assert 0 <= small.sufficiency < large.sufficiency <= 1


# The prompt block and the wire.


def test_the_same_answer_renders_to_the_same_prompt_bytes(shop):
    first = retrieve(shop, ContextRequest(DEBUG, top_k=3))
    second = retrieve(shop, ContextRequest(DEBUG, top_k=3))
    block = prompt_block(first)
    assert block == prompt_block(second) and block.endswith("\n")
    assert block.startswith("Likely relevant places, ranked (found by ")
    assert "verify before relying on them):\n1. shop/ledger.py:" in block
    assert "\n## source\n" in block and "\n## callers\n" in block and "is called by" in block
    # Nothing that changes between two askings of the same question: no timings, no time of day.
    later = replace(first, elapsed_ms=first.elapsed_ms + 1000, answered_at="2000-01-01T00:00:00+00:00")
    assert prompt_block(later) == block and not re.search(r"\d+(\.\d+)? ms\b", block)


def test_each_verbosity_adds_to_the_one_before(shop):
    fields = {}
    for verbosity in ("minimal", "standard", "verbose", "diagnostic", "full"):
        encoded = wire.context_json(retrieve(shop, ContextRequest(DEBUG, top_k=2, verbosity=verbosity)))
        fields[verbosity] = set(encoded) | {f"items.{key}" for key in encoded["items"][0]}
    assert {"task", "sufficiency", "sections", "checkouts", "items.blob_id", "items.content"} <= fields["minimal"]
    assert fields["standard"] - fields["minimal"] == {"query", "mode", "truncated"}
    assert fields["verbose"] - fields["standard"] == {f"items.{k}" for k in (
        "score", "why", "strategies", "sources", "source", "mergedFrom", "dedupedFrom", "fileCapped")}
    assert fields["diagnostic"] - fields["verbose"] == {
        "elapsed_ms", "index", "strategies_run", "strategies_skipped", "language_servers"}
    assert fields["full"] == fields["diagnostic"]
    locations = wire.context_json(retrieve(shop, ContextRequest(DEBUG, top_k=2, verbosity="locations")))
    assert "content" not in locations["items"][0] and "why" in locations["items"][0]


def test_a_request_may_set_the_task_type_and_the_tokenizer(shop):
    answer = retrieve(shop, ContextRequest(DEBUG, top_k=2, task_type="locate", tokenizer="o200k"))
    encoded = wire.context_json(answer, prompt=True)
    assert encoded["task"] == {"type": "locate", "confidence": 1.0, "source": "request", "scores": {}}
    assert encoded["token_count"] == "o200k" and "set by the request" in encoded["prompt"]
    assert [s["name"] for s in encoded["sections"]] == list(template("locate").sections)


@pytest.mark.parametrize(("params", "message"), [
    ({"query": "x", "taskType": "refactor"}, "'taskType' must be one of explain, debug"),
    ({"query": "x", "known": ["a.py"]}, "'known' must be an object"),
    ({"query": "x", "known": {"a.py": "zz"}}, "'known' values must be git blob ids"),
    ({"query": "x", "tokenizer": "gpt2"}, "'tokenizer' must be one of cl100k, o200k, estimate"),
    ({"query": "x", "format": "xml"}, "'format' must be one of json, prompt"),
])
def test_bad_bundle_arguments_name_the_field(params, message):
    from pygls.exceptions import JsonRpcInvalidParams

    from rag_lsp.mcp_server.tools import decode
    from rag_lsp.server.arguments import ArgumentError
    from rag_lsp.server.params import context_params
    from rag_lsp.workspace.settings import Settings

    with pytest.raises(JsonRpcInvalidParams, match=re.escape(message)):
        context_params(params, Settings())
    if "format" not in params:
        arguments = {("question" if key == "query" else key): value for key, value in params.items()}
        with pytest.raises(ArgumentError, match=re.escape(message)):
            decode("context", arguments, Settings(), lambda name, value: shop)


def test_the_arguments_reach_the_request_alike_over_lsp_and_mcp():
    from rag_lsp.mcp_server.tools import decode
    from rag_lsp.server.params import context_params
    from rag_lsp.workspace.settings import Settings

    blob = "a" * 40
    shared = {"taskType": "review", "mode": "ranked", "verbosity": "minimal", "tokenizer": "o200k",
              "known": {"b.py": blob, "a.py": blob}}
    over_lsp = context_params({"query": "q", **shared, "format": "prompt"}, Settings())
    over_mcp = decode("context", {"question": "q", **shared, "format": "prompt"}, Settings(), lambda n, v: v)
    assert over_lsp.request == over_mcp.request and over_lsp.format == over_mcp.format == "prompt"
    assert over_lsp.request.known == (("a.py", blob), ("b.py", blob))


class _Server(IndexSymbolProvider):
    """The index's answers, as a language server called ``fake-server`` would label them."""

    def source_of(self, definition):
        return "fake-server"

    def reference_source(self, definition):
        return "fake-server"


def test_callers_and_callees_come_from_the_provider_and_name_it(shop):
    provider = _Server(shop, workspace_tables(shop))
    answer = retrieve(shop, ContextRequest(DEBUG, top_k=3), provider=provider)
    post = next(item for item in answer.items if item.qualname == "Ledger.post")
    assert {r.source for r in (*post.callers, *post.callees)} == {"fake-server"}
    assert "[fake-server]" in prompt_block(answer)


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_definitions_sharing_a_name_share_its_resolved_uses_but_not_their_own_lines(tmp_path, order):
    # One answer resolves each file's uses of a name once for all its definitions; a definition's own lines
    # are not its uses, yet they are another definition's.
    from rag_lsp.retrieval.bundle.relations import _callers

    index = Index(write_tree(tmp_path / "ws", {
        "a.py": "class A:\n    def clean(self):\n        return self.clean()\n\n\ndef use_a():\n    A().clean()\n",
        "b.py": "class B:\n    def clean(self):\n        return 1\n\n\ndef use_b(b):\n    b.clean()\n",
    }), use_cache=False)
    index.refresh()
    provider = IndexSymbolProvider(index, workspace_tables(index))
    cleans = sorted(index.symbols.by_name("clean"), key=lambda d: d.path)

    def callers(definition, resolved):
        return [(path, qualname) for path, qualname, _, _ in
                _callers(index, provider, definition, provider.references(definition), resolved)]

    # The definitions of one name share one list of references, by which their callers are remembered.
    assert provider.references(cleans[0]) is provider.references(cleans[1])
    alone = [callers(definition, {}) for definition in cleans]
    assert alone[0] == [("a.py", "use_a"), ("b.py", "use_b")]
    assert alone[1] == [("a.py", "A.clean"), ("a.py", "use_a"), ("b.py", "use_b")]
    shared: dict = {}
    assert {n: callers(cleans[n], shared) for n in order} == dict(enumerate(alone))


def test_callers_kept_across_answers_follow_an_edit_of_the_using_file(tmp_path):
    # A file's first uses of a name are kept from one answer to the next; an edit that moves them is read
    # afresh, and the callers equal those of a fresh index of the edited tree.
    from rag_lsp.retrieval.bundle.relations import _callers

    files = {"a.py": "def clean(value):\n    return value.strip()\n",
             "b.py": "from a import clean\n\n\ndef use_b(a):\n    return clean(a)\n\n\ndef other_b(a):\n    return a\n"}
    edited = "from a import clean\n\n\ndef use_b(a):\n    return a\n\n\ndef other_b(a):\n    return clean(a)\n"

    def callers(index, resolved):
        provider = IndexSymbolProvider(index, workspace_tables(index))
        [clean] = index.symbols.by_name("clean")
        return [(path, qualname) for path, qualname, _, _ in
                _callers(index, provider, clean, provider.references(clean), resolved)]

    index = Index(write_tree(tmp_path / "ws", files), use_cache=False)
    index.refresh()
    kept: dict = {}
    assert callers(index, kept) == callers(index, kept) == [("b.py", "use_b")]
    [clean] = index.symbols.by_name("clean")
    before = IndexSymbolProvider(index, workspace_tables(index)).references(clean)
    index.set_file("b.py", edited)
    # An edit gives the name a new list of references: the callers kept by the old one are not used.
    assert IndexSymbolProvider(index, workspace_tables(index)).references(clean) is not before
    fresh = Index(write_tree(tmp_path / "fresh", {**files, "b.py": edited}), use_cache=False)
    fresh.refresh()
    assert callers(index, kept) == callers(fresh, {}) == [("b.py", "other_b")]
    # The import moves below a use on its old line: the file's import lines are read afresh too.
    moved = "LOUD = clean(' a ')\nfrom a import clean\n"
    index.set_file("b.py", moved)
    fresh = Index(write_tree(tmp_path / "moved", {**files, "b.py": moved}), use_cache=False)
    fresh.refresh()
    assert callers(index, kept) == callers(fresh, {}) == [("b.py", "LOUD")]


_CALLING = {
    "core.py": "import util\nfrom util import clean\n\n\nclass Form:\n    def clean(self):\n        return clean(self)\n\n"
               "    class Meta:\n        def clean(self):\n            clean(1)\n            return clean(2)\n\n\n"
               "def clean_all(forms):\n    for form in forms:\n        form.clean()\n    clean(3)\n\n\nclean(4)\n",
    "util.py": "def clean(value):\n    return value\n\n\ndef helper(value):\n    return clean(clean(value))\n\n\n"
               "def helper(value):\n    return clean(value)\n",
    "views.py": "from core import Form, clean_all\nfrom util import clean, helper\n\nVALUE = clean(helper(1))\n\n\n"
                "class View:\n    def post(self, form):\n        clean_all([form])\n        return helper(form.clean())\n",
    "web/app.js": "import { clean } from './clean.js';\n\nexport function post(value) {\n  return clean(value);\n}\n"
                  "class App {\n  run(value) { return post(clean(value)); }\n}\nclean(0);\n",
    "web/clean.js": "export function clean(value) {\n  return value.trim();\n}\n",
    "late.py": "from util import clean; clean(0)\n\n\ndef later():\n    return clean(1)\n",
}


def _all_callers(index: Index) -> dict:
    from rag_lsp.retrieval.bundle.relations import _callers

    provider = IndexSymbolProvider(index, workspace_tables(index))
    return {(d.path, d.qualname, d.start_line): _callers(index, provider, d, provider.references(d), {})
            for path in sorted(index.files) for d in index.symbols.in_file(path)}


def test_callers_read_from_the_snapshots_columns_are_those_of_the_objects(tmp_path):
    # A warm index reads a name's callers in its stored files from the references' owners; they are the callers
    # an index without a snapshot finds line by line: nested definitions, namesakes, import lines, the top level,
    # a definition's own file. After an edit the edited file is read from its objects, the rest from the columns.
    root = write_tree(tmp_path / "ws", _CALLING)
    Index(root).refresh()
    warm = Index(root)
    warm.refresh()
    stored = warm.references.stored
    assert stored is not None and all(warm.references.is_stored(path) for path in _CALLING)
    assert stored.first_uses("clean")["core.py"] == [(7, 1), (11, 3), (17, 4), (21, TOP_LEVEL)]
    # A use on an import statement's line is no use.
    assert stored.first_uses("clean")["late.py"] == [(5, 0)] and ON_IMPORT in stored.columns()[0].owners
    fresh = Index(write_tree(tmp_path / "fresh", _CALLING), use_cache=False)
    fresh.refresh()
    expected = _all_callers(fresh)
    assert sum(map(len, expected.values())) > 20
    assert _all_callers(warm) == expected
    edited = _CALLING["views.py"].replace("VALUE = clean(helper(1))", "VALUE = helper(1)\nOTHER = clean(2)")
    warm.set_file("views.py", edited)
    assert not warm.references.is_stored("views.py")
    fresh = Index(write_tree(tmp_path / "edited", {**_CALLING, "views.py": edited}), use_cache=False)
    fresh.refresh()
    assert _all_callers(warm) == _all_callers(fresh)


@pytest.mark.parametrize("name", ["cl100k", "estimate"])
def test_remembered_counts_are_the_tokenizers_own(name, monkeypatch):
    # Counts are kept by text across answers, at most COUNTS_KEPT of them per encoding, and asked again (by
    # the same answer or a later one) they are what the tokenizer says.
    from rag_lsp.retrieval.bundle import tokenizers
    from rag_lsp.retrieval.bundle.tokenizers import Remembered

    monkeypatch.setattr(tokenizers, "COUNTS_KEPT", 5)
    monkeypatch.setattr(tokenizers, "_KEPT", {})
    counter = tokenizer(name)
    texts = ["def post(self, entry):\n    return entry\n", "aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaaa aa\n",
             "x = 1\n" * 40, ""]
    for _ in range(2):
        remembered = Remembered(counter)
        for text in texts:
            assert remembered.count(text) == counter.count(text)
            for budget in (0, 3, 10, 1000):
                assert remembered.truncate(text, budget) == counter.truncate(text, budget)
            assert len(tokenizers._KEPT[counter.name]) <= 5


_SPANS = st.lists(st.tuples(st.integers(1, 40), st.integers(0, 15), st.sampled_from(["A", "A.f", "B", "B.g"])),
                  max_size=14)


@settings(max_examples=300, deadline=None)
@given(_SPANS, st.sets(st.integers(0, 59), max_size=6))
def test_a_lines_innermost_definition_is_what_painting_the_file_outermost_first_leaves_on_it(spans, imports):
    # A caller is the innermost definition around a use. The outline finds it without painting the file's lines:
    # the same definition as painting each definition's lines in (first line, -last line, qualified name) order,
    # over nested, overlapping, tied and duplicate spans.
    definitions = [Definition(qualname.rpartition(".")[2], qualname, "function", "a.py", start, start + length, 0, 0)
                   for start, length, qualname in spans]
    shape = outline(definitions)
    painted = [-1] * 60
    for number, definition in enumerate(shape.definitions):
        for line in range(definition.start_line, definition.end_line + 1):
            painted[line] = number
    assert sorted(shape.definitions, key=lambda d: (d.start_line, -d.end_line, d.qualname)) == shape.definitions
    assert sorted(shape.definitions) == sorted(definitions)
    assert [shape.innermost(line) for line in range(60)] == painted
    # A file with few uses is scanned instead of outlined: the same definition, the very object.
    scanned = [innermost_by_scan(definitions, line) for line in range(60)]
    assert [definitions[n] if n >= 0 else None for n in scanned] == \
        [shape.definitions[n] if n >= 0 else None for n in painted]
    assert all(definitions[n] is shape.definitions[m] for n, m in zip(scanned, painted) if n >= 0)
    # The owners the snapshot stores beside references: that definition's position in the file's list (the scan's),
    # the top level outside every definition, and no owner on an import line.
    lines = [line for line in range(60) for _ in range(line % 3)]
    assert owners(definitions, imports, lines) == [ON_IMPORT if line in imports else scanned[line]
                                                   if scanned[line] >= 0 else TOP_LEVEL for line in lines]
