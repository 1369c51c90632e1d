"""The ranking stack after the evidence: lists, fusion, rerank signals, graph, coherence, backfill, dependencies,
context-window optimisation, and file-level BM25 — each stage switchable and naming itself in ``why``."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from conftest import write_tree

from rag_lsp.index.file_bm25 import file_scores, top_files
from rag_lsp.index.file_work import chunk_terms
from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.retrieval.query import parse_query
from rag_lsp.retrieval.ranking.candidates import best_chunks, bm25_files, definitions, path_words, spelled_names
from rag_lsp.retrieval.ranking.config import DEFAULT_RANKING, DESIGNED_SIGNALS, EVIDENCE_ONLY, RankingConfig
from rag_lsp.retrieval.ranking.expansion import word_variants
from rag_lsp.retrieval.retrieve import retrieve
from rag_lsp.retrieval.strategies.base import StrategyContext

ROUTES = {
    "app/routing.py": '''"""Routes: how paths map to handlers."""


class APIRouter:
    """Collects routes and registers them on the application."""

    def add_api_route(self, path, endpoint):
        """Register one route."""
        self.routes.append((path, endpoint))

    def include_router(self, router):
        for route in router.routes:
            self.add_api_route(*route)
''',
    "app/applications.py": '''from app.routing import APIRouter


class Application:
    """The application object: owns the router."""

    def __init__(self):
        self.router = APIRouter()

    def get(self, path):
        def decorator(endpoint):
            self.router.add_api_route(path, endpoint)
            return endpoint
        return decorator
''',
    "app/session_manager.py": '''class SessionManager:
    """Keeps the user's session between requests."""

    def load(self, request):
        return request.cookies.get("session")
''',
    "docs/routing.md": "# Routing\n\nRoutes are registered with the router; every route has a path and a handler.\n",
    "tools/generate.rs": "fn main() { println!(\"routes\"); }\n",
    "app/one.py": "def one():\n    return 1\n",
    "app/two.py": "def two():\n    return 2\n",
    "app/three.py": "def three():\n    return 3\n",
}


@pytest.fixture
def index(tmp_path):
    built = indexed(tmp_path / "ws", ROUTES)
    return built


def ask(index, text, top_k=10, config=DEFAULT_RANKING):
    return retrieve(index, ContextRequest(text, top_k=top_k), config=config)


def placed(index, text, path, top_k=10):
    """The answer's place in ``path`` (``StopIteration`` when the answer has none)."""
    return next(item for item in ask(index, text, top_k).items if item.path == path)


def expected_file_scores(index, terms):
    """BM25 over each file's chunks taken as one document, written out."""
    documents = {path: Counter(t for chunk_id in entry.chunk_ids for t in chunk_terms(index.chunks[chunk_id]))
                 for path, entry in index.files.items()}
    average = sum(sum(d.values()) for d in documents.values()) / len(documents)
    expected = {}
    for path, counts in documents.items():
        total = 0.0
        for term, repeats in Counter(terms).items():
            df = sum(1 for d in documents.values() if term in d)
            if counts[term]:
                idf = math.log(1 + (len(documents) - df + 0.5) / (df + 0.5))
                norm = 1.2 * (1 - 0.75 + 0.75 * sum(counts.values()) / average)
                total += repeats * idf * counts[term] * 2.2 / (counts[term] + norm)
        if total > 0:
            expected[path] = total
    return expected


def assert_file_scores_as_written_out(index, terms):
    got = file_scores(index, terms)
    expected = expected_file_scores(index, terms)
    assert got.keys() == expected.keys()
    assert all(got[path] == pytest.approx(expected[path]) for path in expected)


def test_file_bm25_equals_bm25_over_the_concatenated_chunks(index):
    assert_file_scores_as_written_out(index, parse_query("how are routes registered on the router").terms)


def test_file_bm25_follows_edits_and_the_segment_it_reads(index):
    """The same terms asked again after each change: the files and frequencies remembered for a term, and each
    segment row's file, must not outlive the index version or the segment they were read from."""
    terms = parse_query("how are routes registered on the router").terms
    others = parse_query("the application owns one route").terms
    routing = index.root / "app" / "routing.py"
    text = routing.read_text()
    index.bm25.compact()
    assert_file_scores_as_written_out(index, terms)
    # The edit removes segment rows (one file's old chunks) and adds chunks to the mutable part.
    index.set_file("app/routing.py", text.replace("routes", "paths"))
    assert_file_scores_as_written_out(index, terms)
    # A new segment without its dead rows: terms not asked yet read it through a new row-to-file column.
    index.bm25.compact()
    assert_file_scores_as_written_out(index, others)
    assert_file_scores_as_written_out(index, terms)
    index.set_file("app/routing.py", text + "\n\ndef more_routes():\n    return 'route routes'\n")
    index.set_file("app/extra_routes.py", "ROUTES = ['routes', 'router']\n")
    assert_file_scores_as_written_out(index, terms)


def test_after_edits_the_file_table_is_the_one_built_from_scratch(index):
    """An edit moves the edited file's chunks in the last version's table; the result is the table a fresh
    build makes, with or without new chunk ids past its end, and a file added or removed builds it again."""
    from rag_lsp.index import file_bm25

    def same_as_built():
        with index.lock:
            kept, built = file_bm25._files(index), file_bm25._built(index)
        size = max(len(kept.chunk_file), len(built.chunk_file))

        def padded(array):
            return np.concatenate([array, np.full(size - len(array), -1, dtype=np.int64)])

        assert kept.paths == built.paths and np.array_equal(kept.lengths, built.lengths)
        assert np.array_equal(padded(kept.chunk_file), padded(built.chunk_file))
        return kept

    before = same_as_built()
    routing = index.root / "app" / "routing.py"
    text = routing.read_text()
    # A line added inside a body keeps most chunks' ids and changes one; then a new function adds chunk ids.
    index.set_file("app/routing.py", text.replace("        ", "        # edited\n        ", 1))
    moved = same_as_built()
    assert moved.paths is before.paths, "an edit moves chunks in the table, it does not build it again"
    index.set_file("app/routing.py", text + "\n\ndef added_later(value):\n    return value * 2\n")
    assert same_as_built().paths is before.paths
    index.set_file("app/new_module.py", "def fresh():\n    return 'fresh route'\n")
    assert same_as_built().paths is not before.paths
    index.remove_file("app/new_module.py")
    same_as_built()
    assert file_bm25.file_scores(index, ["route"]) and file_bm25.top_files(index, ["route"], 3)


def test_top_files_are_the_best_scores_with_ties_by_path(tmp_path):
    # Equal files tie; the selection on the score array must order them by path, like sorting the pairs.
    same = "def route():\n    return 'route'\n"
    index = Index(write_tree(tmp_path / "ws", {"b/z.py": same, "a/y.py": same, "c/x.py": same,
                                               "d/route_table.py": "ROUTE = 'route route route'\n",
                                               "e/other.py": "def other():\n    return 1\n"}), use_cache=False)
    index.refresh()
    terms = parse_query("route").terms
    scores = file_scores(index, terms)
    expected = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    assert len(set(scores.values())) < len(scores)
    # Every limit, those cutting through the tied files included (only files at least as good as the limit-th
    # best are sorted).
    for limit in range(len(expected) + 2):
        assert top_files(index, terms, limit) == expected[:limit]
    assert "e/other.py" not in dict(top_files(index, terms, 10))



def test_each_files_best_chunk_is_its_first_chunk_of_the_highest_score(index):
    # One pass over all the files' chunk scores picks what np.argmax picks file by file: the best-scoring chunk,
    # the first of equals (the file's first chunk when no chunk shares a word); files without chunks are left out.
    paths = [*sorted(index.files), "no/such.py"]
    for text in ("how are routes registered on the router", "nothing matches zzz", "two three"):
        terms = parse_query(text).terms
        expected = {}
        for path in paths[:-1]:
            ids = index.files[path].chunk_ids
            if ids:
                expected[path] = ids[int(np.argmax(index.bm25.score_array(list(terms), ids)))]
        assert best_chunks(index, terms, paths) == expected
        assert best_chunks(index, terms, paths[::-1]) == expected

def test_lists_find_files_by_their_words_names_and_definitions(index):
    query = parse_query("how does the router register routes")
    files = [index.chunks[item.chunk_id].path for item in bm25_files(index, query.terms)]
    assert files[0] == "app/routing.py"
    defined = [index.chunks[item.chunk_id].qualname for item in definitions(index, parse_query("the session manager"))]
    assert defined == ["SessionManager"]
    named = [index.chunks[item.chunk_id].path for item in path_words(index, StrategyContext(index, query).tables, query)]
    # "routes" and "router" name routing.py and routing.md by their common stem.
    assert set(named) == {"app/routing.py", "docs/routing.md"}
    assert "SessionManager" in spelled_names("the session manager") and "session_manager" in spelled_names(
        "the session manager")


def test_the_files_a_path_word_names_follow_files_added_and_removed(index):
    query = parse_query("how does the router register routes")

    def named() -> set[str]:
        return {index.chunks[item.chunk_id].path
                for item in path_words(index, StrategyContext(index, query).tables, query)}

    assert "app/router_table.py" not in named()
    index.set_file("app/router_table.py", "def register(route):\n    return route\n")
    assert "app/router_table.py" in named()
    index.remove_file("app/routing.py")
    assert named() == {"docs/routing.md", "app/router_table.py"}


def test_top_k_means_top_k_and_the_backfill_says_so(index):
    config = DEFAULT_RANKING.without("window")
    answer = ask(index, "how are routes registered", top_k=6, config=config)
    assert len([i for i in answer.items if i.source == "ranked"]) == 6
    assert any("lower confidence" in reason for item in answer.items for reason in item.why)
    cut = ask(index, "how are routes registered", top_k=6, config=config.without("backfill"))
    assert len([i for i in cut.items if i.source == "ranked"]) < 6


def test_the_evidence_alone_is_the_ranking_before_the_stack(index):
    staged = ask(index, "how are routes registered")
    evidence = ask(index, "how are routes registered", config=EVIDENCE_ONLY)
    assert all(item.source == "ranked" for item in evidence.items)
    assert not any("lower confidence" in reason for item in evidence.items for reason in item.why)
    assert len(staged.items) > len(evidence.items)


def test_code_comes_before_prose_and_incidental_languages(index):
    answer = ask(index, "how are routes registered")
    paths = [item.path for item in answer.items if item.source == "ranked"]
    assert paths.index("app/routing.py") < paths.index("docs/routing.md")
    prose = next(item for item in answer.items if item.path == "docs/routing.md")
    assert any(reason.startswith("rerank: prose") for reason in prose.why)


def test_a_long_report_is_about_the_docs_only_when_its_title_says_so(index):
    body = ("Registering a route with add_api_route and then including the router twice registers every route "
            "twice. I read the docs and the tutorial before filing this, and the guide does not mention it. "
            "Steps: create a router, add a route, include it in the application, list the routes.")

    def prose_demoted(title: str) -> bool:
        answer = ask(index, f"{title}\n\n{body}")
        prose = next(item for item in answer.items if item.path == "docs/routing.md")
        return any(reason.startswith("rerank: prose") for reason in prose.why)

    assert prose_demoted("Routes registered twice when a router is included twice")
    assert not prose_demoted("Docs: routes registered twice when a router is included twice")


def test_files_in_a_language_the_workspace_barely_uses_come_later(tmp_path):
    tree = {f"app/module_{n}.py": f"def handler_{n}():\n    return 'route {n}'\n" for n in range(12)}
    tree["tools/routes.rs"] = "fn routes() { println!(\"route\"); }\n"
    index = Index(write_tree(tmp_path / "ws", tree), use_cache=False)
    index.refresh()
    rust = placed(index, "route handlers", "tools/routes.rs", top_k=20)
    assert any("main languages" in reason for reason in rust.why)


def test_a_one_word_question_is_a_name(index):
    answer = ask(index, "SessionManager")
    assert (answer.items[0].path, answer.items[0].qualname) == ("app/session_manager.py", "SessionManager")


def test_dependencies_come_after_the_ranked_places_and_say_what_uses_them(index):
    answer = ask(index, "the Application class", top_k=1)
    ranked = [item for item in answer.items if item.source == "ranked"]
    following = [item for item in answer.items if item.source == "dependency"]
    assert len(ranked) == 1 and following
    assert answer.items.index(following[0]) > answer.items.index(ranked[-1])
    assert any(reason.startswith("dependency: ") for reason in following[0].why)
    assert not any(item.source == "dependency" for item in ask(
        index, "the Application class", top_k=1, config=DEFAULT_RANKING.without("dependencies")).items)


def test_adjacent_places_of_a_file_merge_and_say_so(index):
    answer = ask(index, "APIRouter add_api_route include_router register routes")
    routing = [item for item in answer.items if item.path == "app/routing.py"]
    assert len(routing) == 1 and routing[0].merged_from
    assert routing[0].start_line <= 4 and routing[0].end_line == 13
    separate = ask(index, "APIRouter add_api_route include_router register routes",
                   config=DEFAULT_RANKING.without("window"))
    unmerged = [item for item in separate.items if item.path == "app/routing.py"]
    assert len(unmerged) > 1 and all(item.focus_line == item.start_line for item in unmerged)
    # An editor jumps to the place the ranking chose first, inside the merged span.
    assert routing[0].focus_line == unmerged[0].start_line
    assert routing[0].start_line <= routing[0].focus_line <= routing[0].end_line


def test_a_file_keeps_at_most_its_cap_of_places(index):
    config = RankingConfig(merge_gap=-100, max_per_file=1)
    answer = ask(index, "APIRouter add_api_route include_router register routes", config=config)
    routing = [item for item in answer.items if item.path == "app/routing.py"]
    assert len(routing) == 1 and routing[0].file_capped


def test_every_stage_that_moved_a_place_names_itself(index):
    answer = ask(index, "APIRouter add_api_route include_router register routes",
                 config=DEFAULT_RANKING.without("window"))
    reasons = " | ".join(reason for item in answer.items for reason in item.why)
    for mark in ("bm25_files #", "path_words #", "definitions #", "coherence:", "rerank:", "graph:"):
        assert mark in reasons


def test_the_graph_coherence_and_feedback_serve_questions_not_reports(index):
    question = "APIRouter add_api_route include_router register routes"
    report = (f"{question} twice\n\nWhen I include a router in the application, every route it holds is registered "
              "twice and the second registration silently replaces the handler of the first one. I expected the "
              "application to keep one route per path, as the documentation says it does for routers.")
    config = DEFAULT_RANKING.without("window")

    def reasons(text: str) -> str:
        return " | ".join(reason for item in ask(index, text, config=config).items for reason in item.why)

    assert "graph:" in reasons(question) and "coherence:" in reasons(question)
    assert "graph:" not in reasons(report) and "coherence:" not in reasons(report)


def indexed(root, files: dict[str, str]) -> Index:
    """A refreshed in-memory index of ``files`` written under ``root``."""
    index = Index(write_tree(root, files), use_cache=False)
    index.refresh()
    return index


def filled_index(root, files: dict[str, str]) -> Index:
    """An index of ``files`` among thirty filler files, which keep their words rare enough to count."""
    tree = {f"app/filler_{n}.py": f"def task_{n}():\n    return 'chore number {n}'\n" for n in range(30)}
    return indexed(root, tree | files)


def test_feedback_rounds_serve_questions_not_reports(tmp_path):
    index = filled_index(tmp_path / "refunds", {
        "app/refunds.py": "def issue_refund(order):\n    return reverse_ledger_entry(order.payment)\n",
        "app/ledger.py": "def reverse_ledger_entry(payment):\n    return payment.amount * -1\n"})
    question = "how is a refund issued"
    report = (f"{question}? When a customer asks for their money back the refund is issued twice and the order "
              "shows two refunds, although the payment was only taken once and the customer was told that a "
              "single refund is all they would ever receive from the shop.")
    fed_back = {text: [item.path for item in ask(index, text).items
                       if any("(expanded query" in reason for reason in item.why)] for text in (question, report)}
    assert fed_back[question] and fed_back[report] == []


def test_retriever_weights_scale_places_by_glob(index):
    plain = ask(index, "how are routes registered", config=DEFAULT_RANKING.without("window"))
    config = RankingConfig(retriever_weights=(("app/routing.py", 0.1),), window=False)
    weighted = ask(index, "how are routes registered", config=config)
    before = max(item.score for item in plain.items if item.path == "app/routing.py")
    after = [item for item in weighted.items if item.path == "app/routing.py"]
    assert max(item.score for item in after) < before
    assert all(any("retriever weight ×0.1" in reason for reason in item.why) for item in after)


def test_the_ranking_is_deterministic(index, tmp_path):
    again = Index(write_tree(tmp_path / "again", ROUTES), use_cache=False)
    again.refresh()
    first = [(i.path, i.start_line, i.score) for i in ask(index, "how are routes registered").items]
    second = [(i.path, i.start_line, i.score) for i in ask(again, "how are routes registered").items]
    assert first == second


def test_the_ranking_setting_switches_stages_and_weights_and_names_bad_keys(tmp_path):
    from rag_lsp.workspace.settings import Settings, SettingsError, apply_settings

    settings, _ = apply_settings(Settings(), {"ranking": {"graph": False, "maxPerFile": 2,
                                                          "listWeights": {"path_words": 0.5},
                                                          "signals": {"documented": 1.2},
                                                          "retrieverWeights": {"docs/**": 0.3}}})
    config = settings.ranking
    assert (config.graph, config.max_per_file, config.weight_of("path_words")) == (False, 2, 0.5)
    assert dict(config.signals)["documented"] == 1.2 and config.retriever_weight("docs/a.md", "section") == 0.3
    for bad, message in (({"graf": True}, "unknown key 'graf'"), ({"graph": "no"}, "true or false"),
                         ({"listWeights": {"dense": 1}}, "unknown dense"), ({"rrfK": 0}, "from 1 to 1000")):
        with pytest.raises(SettingsError, match=message):
            apply_settings(Settings(), {"ranking": bad})
    write_tree(tmp_path / "ws", {".rag-lsp.toml": "[ranking]\nwindow = false\n", "a.py": "x = 1\n"})
    from rag_lsp.workspace.settings import load_operator_file
    operator, _ = apply_settings(Settings(), load_operator_file(tmp_path / "ws"), overlay=True)
    assert operator.ranking.window is False


def test_the_settings_status_shows_can_be_sent_back_unchanged():
    """A client that resets the settings by sending back what ``ragLsp/status`` showed (as the fuzzer does)
    must not be refused: every value shown is one the settings accept, and the round trip changes nothing."""
    from rag_lsp.server.wire import settings_json
    from rag_lsp.workspace.settings import Settings, apply_settings

    changed, _ = apply_settings(Settings(), {"ranking": {"expansion": False, "graph": False}, "topK": 3})
    for settings in (Settings(), changed):
        again, warnings = apply_settings(Settings(), settings_json(settings))
        assert (again, warnings) == (settings, [])
    assert changed.ranking.expansion == 0 and settings_json(changed)["ranking"]["expansion"] is False


def test_the_code_graph_after_edits_is_the_graph_of_a_fresh_index(index, tmp_path):
    """Edits update the graph in place (the links of what changed), and the result is exactly the graph a fresh
    index of the same texts builds: a question after an edit gets a fresh index's answer."""
    from rag_lsp.retrieval.ranking.centrality import graph

    with index.lock:
        before = graph(index)
    texts = dict(ROUTES)
    # A definition renamed (its users lose their link), a new use of it, and an import added.
    texts["app/routing.py"] = ROUTES["app/routing.py"].replace("class APIRouter", "class Router")
    texts["app/two.py"] = "from app.one import one\n\n\ndef two():\n    return one() + Router()\n"
    for path in ("app/routing.py", "app/two.py"):
        index.set_file(path, texts[path])
    with index.lock:
        after = graph(index)
    fresh = Index(write_tree(tmp_path / "fresh", texts), use_cache=False)
    fresh.refresh()
    with fresh.lock:
        expected = graph(fresh)
    assert after.neighbours == expected.neighbours and after.centrality == expected.centrality
    assert after.neighbours != before.neighbours and after.centrality != before.centrality
    assert "app/routing.py" in after.neighbours["app/two.py"] and "app/one.py" in after.neighbours["app/two.py"]
    # An edit that changes no link (a comment typed in a body) leaves the graph as it is: not built again.
    index.set_file("app/two.py", texts["app/two.py"].replace("    return", "    # a comment\n    return"))
    with index.lock:
        assert graph(index) is after


def test_questions_during_a_refresh_use_the_graph_as_last_built(index, tmp_path):
    """Each batch of a refresh makes the graph out of date; a question asked meanwhile does not link the files
    again (on Django that cost seconds per question), and the first question after the refresh does."""
    from rag_lsp.retrieval.ranking.centrality import graph, question_graph

    with index.lock:
        before = graph(index)
    (index.root / "app" / "two.py").write_text("from app.one import one\n\n\ndef two():\n    return one()\n")
    during = []

    def progress(done, total):
        with index.lock:
            during.append((index.refreshing, question_graph(index), "app/two.py" in index.files))
        # An answer while indexing: the stale graph serves it.
        assert ask(index, "how are routes registered").items

    index.refresh(progress=progress)
    assert during and all(refreshing and used is before for refreshing, used, _ in during)
    assert during[-1][2], "the new file was installed while the old graph served"
    with index.lock:
        after = question_graph(index)
    assert not index.refreshing and after is not before and "app/one.py" in after.neighbours["app/two.py"]
    # Before any graph was built, a question during the first refresh has none.
    fresh = Index(write_tree(tmp_path / "fresh", ROUTES), use_cache=False)
    seen = []
    fresh.refresh(progress=lambda done, total: seen.append(question_graph(fresh).paths))
    assert seen and all(paths == () for paths in seen)


def test_a_question_that_is_one_code_name_puts_its_definition_before_code_that_writes_it(tmp_path):
    """`Ledger.post` is written out (in any case) only where it is used, `ledger.post(...)`; the definition is
    `class Ledger: ... def post`. The editors ask exactly this for the symbol at the cursor."""
    ledger = '"""Double-entry ledger."""\nfrom shop.currency import convert\n\n\nclass Ledger:\n' \
             '    """Keeps one account per currency."""\n\n    def __init__(self):\n        self.accounts = {}\n\n' \
             '    def post(self, entry):\n        """Post an entry; the account must exist for its currency."""\n' \
             '        account = self.accounts[entry.currency]\n' \
             '        account.append(convert(entry.amount, entry.currency))\n\n    def balance(self, currency):\n' \
             '        """The sum of one currency\'s account."""\n        return sum(self.accounts.get(currency, []))\n'
    test = 'import pytest\n\nfrom shop.ledger import Ledger\n\n\ndef test_post_unknown_currency_raises():\n' \
           '    ledger = Ledger()\n    with pytest.raises(KeyError):\n' \
           '        ledger.post(type("Entry", (), {"currency": "GBP", "amount": 1})())\n'
    index = Index(write_tree(tmp_path / "ws", {"shop/ledger.py": ledger, "tests/test_ledger.py": test}),
                  use_cache=False)
    index.refresh()
    first = ask(index, "`Ledger.post`").items[0]
    assert first.path == "shop/ledger.py" and "symbol: `Ledger.post` is defined here" in first.why
    assert not any("verbatim" in reason for item in ask(index, "`Ledger.post`").items for reason in item.why)


def test_versions_of_one_document_do_not_fill_the_answer(tmp_path):
    manual = "# Filters\n\nThe `ltrimstr` filter removes a prefix from a string input.\n"
    tree = {f"docs/manual/v1.{minor}/manual.md": manual for minor in range(3, 8)}
    tree["src/builtin.c"] = ('static jv f_ltrimstr(jq_state *jq, jv input, jv left) {\n'
                             '  /* ltrimstr: remove a prefix from a string input */\n  return input;\n}\n')
    built = indexed(tmp_path / "ws", tree)
    paths = [item.path for item in ask(built, "ltrimstr filter prefix string docs").items if item.source == "ranked"]
    assert paths.index("src/builtin.c") <= 1
    later = [item for item in ask(built, "ltrimstr filter prefix string docs").items
             if item.path.startswith("docs/") and any("other version" in r or "another version" in r for r in item.why)]
    assert len(later) == 4


def test_tests_come_after_the_code_they_test_unless_the_question_is_about_tests(tmp_path):
    tree = dict(ROUTES)
    tree["tests/test_routing.py"] = ('from app.routing import APIRouter\n\n\ndef test_include_router_registers_routes():\n'
                                     '    router = APIRouter()\n    router.include_router(APIRouter())\n'
                                     '    assert router.routes == []\n')
    built = indexed(tmp_path / "ws", tree)

    def test_item(question: str):
        return placed(built, question, "tests/test_routing.py")

    assert any(reason.startswith("rerank: a test") for reason in test_item("include_router registers routes").why)
    assert not any(reason.startswith("rerank: a test")
                   for reason in test_item("which test checks that include_router registers routes").why)


def test_a_file_of_unknown_type_beside_the_source_is_part_of_it(tmp_path):
    tree = {
        "src/builtin.c": "static jv f_limit(jq_state *jq, jv input, jv n) {\n  return input;\n}\n",
        "src/execute.c": "int jq_next(jq_state *jq) {\n  return 0;\n}\n",
        "src/builtin.jq": "def nth($n; f): last(limit($n + 1; f));\ndef first(f): label $out | f | ., break $out;\n",
        "assets/themes/nth.tmTheme": "<key>nth</key> last limit colour scheme\n",
        "docs/manual.txt": "nth(n; f) outputs the last of limit(n + 1; f).\n",
    }
    built = indexed(tmp_path / "ws", tree)
    items = {item.path: item for item in ask(built, "nth last limit semantics").items}
    grammar, theme, manual = items["src/builtin.jq"], items["assets/themes/nth.tmTheme"], items["docs/manual.txt"]
    assert not any(reason.startswith("rerank: prose") or "unknown type" in reason for reason in grammar.why)
    assert any(reason.startswith("rerank: a file of unknown type away from the source ×0.5") for reason in theme.why)
    assert any(reason.startswith("rerank: prose") for reason in manual.why)
    ranked = [path for path in items if items[path].source == "ranked"]
    assert ranked.index("src/builtin.jq") < ranked.index("assets/themes/nth.tmTheme")


def test_an_all_capitals_constant_does_not_make_a_question_one_about_configuration(tmp_path):
    tree = {
        "src/exec.rs": "fn batch(args: &[String]) -> usize {\n    let limit = ARG_MAX;\n    args.len().min(limit)\n}\n",
        "src/config.rs": "fn pager() -> String {\n    std::env::var(\"FD_PAGER\").unwrap_or_default()\n}\n",
        "contrib/completion/_fd": "_arguments batch command limit ARG_MAX FD_PAGER list too long\n",
    }
    built = indexed(tmp_path / "ws", tree)

    def completion_demoted(question: str) -> bool:
        item = placed(built, question, "contrib/completion/_fd")
        return any("unknown type away from the source" in reason for reason in item.why)

    # ``ARG_MAX`` is a constant (no code reads it from the environment); ``FD_PAGER`` is a variable code reads.
    assert completion_demoted("batch the command when the list is longer than ARG_MAX allows")
    assert not completion_demoted("batch the command list when FD_PAGER is set")


def test_a_library_copied_into_the_source_ranks_below_the_projects_own_code(tmp_path):
    tree = {
        "src/execute.c": "int jv_array_get(jv a, int index) {\n  /* negative index wraps */\n  return index;\n}\n",
        "src/decNumber/decContext.c": "int decContextIndex(int index) {\n  return index; /* negative index */\n}\n",
        "src/decNumber/ICU-license.html": "<p>ICU License</p>\n",
    }
    built = indexed(tmp_path / "ws", tree)
    items = {item.path: item for item in ask(built, "negative index wraps twice").items}
    assert any(reason.startswith("rerank: vendored copy (its folder has its own licence) ×0.5")
               for reason in items["src/decNumber/decContext.c"].why)
    assert not any("vendored" in reason for reason in items["src/execute.c"].why)


def test_what_counts_as_the_source_follows_a_file_moved_between_folders(tmp_path):
    tree = {"src/parser.c": "int parse(void) {\n  return 0;\n}\n", "src/lexer.c": "int lex(void) {\n  return 0;\n}\n",
            "grammar/parser.y": "%token IDENT\nexpr: IDENT ;\n"}
    built = indexed(tmp_path / "ws", tree)

    def grammar_demoted() -> bool:
        item = placed(built, "IDENT token expr grammar", "grammar/parser.y")
        return any("unknown type away from the source" in reason for reason in item.why)

    assert grammar_demoted()
    # One file moves: the count of files stays, and the grammar's folder now holds C code.
    built.remove_file("src/lexer.c")
    built.set_file("grammar/lexer.c", tree["src/lexer.c"])
    assert not grammar_demoted()


def test_a_header_counts_as_one_once_an_edit_gives_its_file_definitions(tmp_path):
    # Whether a file has definitions is kept between questions until a file changes: a stale answer would
    # leave the edited file's header undemoted. The header signal is off by default; this ranking has it on.
    config = RankingConfig(signals=DESIGNED_SIGNALS)
    tree = dict(ROUTES)
    tree["app/registry.py"] = "import app.routing\n\nREGISTRY_ROUTES = app.routing.APIRouter()  # registry routes\n"
    built = indexed(tmp_path / "ws", tree)

    def header_demoted() -> bool:
        answer = ask(built, "registry routes", config=config)
        header = next(item for item in answer.items if item.path == "app/registry.py" and item.start_line == 1)
        return any(reason.startswith("rerank: a file's header") for reason in header.why)

    assert not header_demoted()
    built.set_file("app/registry.py", tree["app/registry.py"] + "\n\ndef lookup(name):\n    return name\n")
    assert header_demoted()


def test_signals_switched_off_by_default_still_apply_when_switched_on(index):
    # The rerank reads an off signal's evidence not at all; switched on, it must still find it.
    def documented(config: RankingConfig) -> bool:
        answer = ask(index, "how does add_api_route register one route", config=config)
        place = next(item for item in answer.items if item.path == "app/routing.py" and item.source == "ranked")
        return any(reason.startswith("rerank: documented ×1.2") for reason in place.why)

    assert documented(RankingConfig(signals=DESIGNED_SIGNALS))
    assert not documented(DEFAULT_RANKING)

    def kind_asked(config: RankingConfig) -> bool:
        answer = ask(index, "the class that collects routes", config=config.without("window"))
        return any(reason == "rerank: the class the question asks for ×2" for item in answer.items
                   for reason in item.why)

    assert kind_asked(RankingConfig(signals=DESIGNED_SIGNALS))
    assert not kind_asked(DEFAULT_RANKING)


def test_prose_words_also_search_the_forms_the_code_uses(tmp_path):
    index = filled_index(tmp_path / "forms", {
        "app/reader.py": "class Parser:\n    def split_fields(self, text):\n        return text.split(',')\n",
        "app/notes.py": "def describe():\n    return 'a string of words'\n"})
    question = "how the input string parses"
    assert word_variants(index, parse_query(question)) == ["parser"]
    # A word written as code is meant as written; a stopword has no forms.
    assert word_variants(index, parse_query("`parses` of Parsing with this")) == []

    def bm25_reasons(config):
        return [reason for item in ask(index, question, config=config).items
                if item.path == "app/reader.py" for reason in item.why if reason.startswith("bm25_chunks #")]

    found = bm25_reasons(DEFAULT_RANKING.without("expansion"))
    assert len(found) == 1 and found[0].endswith("(word forms: parser)")
    # The feedback round's query keeps the forms, and its reasons say so.
    found = bm25_reasons(DEFAULT_RANKING)
    assert len(found) == 1 and found[0].endswith("(expanded query, word forms: parser)")
    assert bm25_reasons(DEFAULT_RANKING.without("variants")) == []
    # A title and a body, however short, are an issue: it brings its own words.
    issue = ask(index, f"Input fails\n{question}")
    assert not any("word forms" in reason for item in issue.items for reason in item.why)
    # A form of a prose word that names a type finds the type's definition.
    named = [reason.split(": ", 1)[1] for item in ask(index, question, config=DEFAULT_RANKING.without("window")).items
             for reason in item.why if "named by" in reason]
    assert named == ["defines Parser, named by 'parser'"]
    assert not any("named by" in reason for item in ask(index, question, config=DEFAULT_RANKING.without("variants")).items
                   for reason in item.why)


def test_code_for_windows_alone_ranks_below_its_other_platforms_unless_the_question_names_windows(tmp_path):
    body = "  /* open read write stat the file */\n  return uv_fs_open(loop, req, path);\n}\n"
    tree = {"src/win/fs.c": f"int fs_open(uv_loop_t* loop, uv_fs_t* req, const char* path) {{\n{body}",
            "src/unix/fs.c": f"int fs_open(uv_loop_t* loop, uv_fs_t* req, const char* path) {{\n{body}"}
    built = indexed(tmp_path / "ws", tree)
    first = [item.path for item in ask(built, "file system operations like open read write stat").items]
    assert first[0] == "src/unix/fs.c"
    demoted = placed(built, "open read write stat", "src/win/fs.c")
    assert "rerank: code for Windows alone, and the question does not name Windows ×0.7" in demoted.why
    named = placed(built, "open read write stat on Windows", "src/win/fs.c")
    assert not any("Windows alone" in reason for reason in named.why)


def test_an_older_major_version_beside_a_later_one_ranks_below_it_unless_the_question_names_it(tmp_path):
    body = "export function safeParse(schema, input) {\n  // parse the input and return success or error\n}\n"
    built = indexed(tmp_path / "ws", {"src/v3/types.ts": body, "src/v4/core/parse.ts": body})

    def older_why(question: str) -> list[str]:
        return placed(built, question, "src/v3/types.ts").why

    assert ask(built, "safeParse success or error").items[0].path == "src/v4/core/parse.ts"
    assert "rerank: an older version's copy (`v3/` beside a later one) ×0.5" in older_why("safeParse success or error")
    assert not any("older version" in reason for reason in older_why("safeParse success or error in v3"))
