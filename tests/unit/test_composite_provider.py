"""Routing between language servers and the patterns, with in-process stand-ins for the clients.

The real clients are tested against real servers (tests/e2e/test_langservers_real.py) and against a fake
server process for faults (tests/unit/langservers/); here the stand-ins make each routing rule observable:
which source answers, the call budget, the timeout rule, and the reasons a server is skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest
from answers import context_of, notes_of
from conftest import write_tree

from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import PATTERNS, IndexSymbolProvider, NeedsServer
from rag_lsp.index.tables import workspace_tables
from rag_lsp.langservers.client import Place, ServerCallError
from rag_lsp.langservers.composite import CompositeSymbolProvider, name_position
from rag_lsp.langservers.pool import AnswerMemo
from rag_lsp.langservers.spec import ServerSpec, ServerStatus
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.retrieval.ranking.config import DEFAULT_RANKING

FILES = {
    "app/limits.py": (
        "class RateLimiter:\n"
        "    # allow is the hot path\n"
        "    def allow(self, key):\n"
        "        return True\n"
        "\n"
        "\n"
        "class Door:\n"
        "    def allow(self, person):\n"
        "        return False\n"
    ),
    "app/jobs.py": (
        "from app.limits import RateLimiter\n"
        "\n"
        "\n"
        "def run(limiter: RateLimiter):\n"
        "    return limiter.allow('k')\n"
    ),
    "web/limits.ts": "export class RateLimiter {\n  allow(key: string): boolean {\n    return true;\n  }\n}\n",
    "web/use.tsx": "import { RateLimiter } from './limits';\nexport const ok = new RateLimiter().allow('k');\n",
}


class StandIn:
    """Answers like a ready client; ``fail`` makes every call raise that kind of ServerCallError."""

    def __init__(self, name: str, languages: tuple[str, ...], state: str = "ready", fail: str | None = None):
        self.spec = ServerSpec(name=name, command=f"/usr/bin/{name}", languages=languages)
        self.state = state
        self.fail = fail
        self.calls: list[tuple] = []
        self.synced: dict[str, str] = {}
        self.started = 0
        self.warming = False

    def ensure_started(self) -> None:
        self.started += 1
        if self.state == "idle":
            self.state = "starting"

    def wait_ready(self, timeout: float) -> bool:
        return self.state == "ready"

    def status(self) -> ServerStatus:
        return ServerStatus(self.spec.name, None, self.spec.languages, self.state,
                            last_error="boom" if self.fail else None)

    def supports(self, method: str) -> bool:
        return True

    def has_documents(self) -> bool:
        return bool(self.synced)

    def sync(self, path: str, text: str, language_id: str) -> None:
        self.synced[path] = text

    def _answer(self, method: str, *args, timeout: float):
        self.calls.append((method, *args, timeout))
        if self.fail:
            raise ServerCallError(self.fail, f"{method} failed")

    def workspace_symbols(self, query: str, timeout: float) -> list[Place]:
        self._answer("workspace_symbols", query, timeout=timeout)
        # Only the first class's method: a server knows the two `allow`s apart.
        return [Place("app/limits.py", 3, 8, 3, 13, name="allow", kind="method", container="RateLimiter")] \
            if query == "allow" else []

    def references(self, path: str, line: int, character: int, timeout: float) -> list[Place]:
        self._answer("references", path, line, character, timeout=timeout)
        return [Place("app/jobs.py", 5, 19, 5, 24)]

    def implementation(self, path: str, line: int, character: int, timeout: float) -> list[Place]:
        self._answer("implementation", path, line, character, timeout=timeout)
        return [Place("app/limits.py", 7, 6, 7, 10, name="Door")]

    def definition(self, path: str, line: int, character: int, timeout: float) -> list[Place]:
        self._answer("definition", path, line, character, timeout=timeout)
        # `limiter.allow` in app/jobs.py means the limiter's; elsewhere the stand-in points outside the index.
        return [Place("app/limits.py", 3, 8, 3, 13)] if path == "app/jobs.py" else [Place("lib/site.py", 1, 0, 1, 4)]

    def hover(self, path: str, line: int, character: int, timeout: float) -> str | None:
        self._answer("hover", path, line, character, timeout=timeout)
        return "(method) def allow(self, key) -> bool"


class Pool:
    def __init__(self, clients: dict[str, object]):
        self.clients = clients
        self.answers = AnswerMemo()

    def client_for(self, language: str):
        return self.clients.get(language, f"no server configured for {language}")


@pytest.fixture
def index(tmp_path: Path) -> Index:
    built = Index(write_tree(tmp_path, FILES), use_cache=False)
    built.refresh()
    return built


def composite(index: Index, pool: Pool, **options) -> CompositeSymbolProvider:
    return CompositeSymbolProvider(IndexSymbolProvider(index, workspace_tables(index)), pool,
                                   lambda rel: (index.root / rel).read_text(), **options)


def test_a_ready_server_answers_its_language_and_patterns_answer_the_others(index):
    python = StandIn("pyright", ("python",))
    provider = composite(index, Pool({"python": python}))
    found = provider.definitions("allow")
    assert [(d.path, d.qualname, provider.source_of(d)) for d in found] == [
        ("app/limits.py", "RateLimiter.allow", "pyright"),
        ("web/limits.ts", "RateLimiter.allow", PATTERNS),
    ]
    # The server was sent the file's text before it was asked.
    assert "app/limits.py" in python.synced
    assert notes_of(provider) == [{"server": "pyright", "languages": ["python"], "state": "ready", "calls": 1,
                                 "answered": 1, "remembered": 0, "skipped": None}]


def test_a_server_that_is_starting_is_not_waited_for(index):
    python = StandIn("pyright", ("python",), state="idle")
    provider = composite(index, Pool({"python": python}))
    found = provider.definitions("allow")
    assert {provider.source_of(d) for d in found} == {PATTERNS}
    assert len(found) == 3
    assert python.started == 1 and python.calls == []
    assert notes_of(provider)[0]["skipped"] == "starting"


def test_a_server_loading_its_project_is_not_asked(index):
    python = StandIn("pyright", ("python",))
    python.warming = True
    provider = composite(index, Pool({"python": python}))
    assert {provider.source_of(d) for d in provider.definitions("allow")} == {PATTERNS}
    assert python.calls == [] and notes_of(provider)[0]["skipped"] == "loading its project"


@pytest.mark.parametrize("kind", ["timeout", "error", "malformed", "crashed"])
def test_a_failing_server_is_skipped_for_the_rest_of_the_question(index, kind):
    python = StandIn("pyright", ("python",), fail=kind)
    provider = composite(index, Pool({"python": python}))
    assert {provider.source_of(d) for d in provider.definitions("allow")} == {PATTERNS}
    assert {provider.source_of(d) for d in provider.definitions("RateLimiter")} == {PATTERNS}
    assert len(python.calls) == 1
    assert notes_of(provider)[0]["skipped"] == f"{kind}: workspace_symbols failed"


def test_the_call_budget_caps_server_calls(index):
    python = StandIn("pyright", ("python",))
    provider = composite(index, Pool({"python": python}), max_calls=1)
    provider.definitions("allow")
    provider.definitions("RateLimiter")
    assert len(python.calls) == 1
    assert notes_of(provider)[0]["skipped"] == "the budget of 1 server calls per retrieval was spent"


def test_the_timeout_is_the_smaller_of_the_setting_and_the_time_left(index):
    python = StandIn("pyright", ("python",))
    now = [100.0]
    provider = composite(index, Pool({"python": python}), timeout=1.5, deadline=100.4, clock=lambda: now[0])
    provider.definitions("allow")
    assert python.calls[0][-1] == pytest.approx(0.4)
    now[0] = 100.5
    provider.definitions("RateLimiter")
    assert len(python.calls) == 1
    assert notes_of(provider)[0]["skipped"] == "the retrieval's time budget was spent"


def test_all_calls_of_a_question_share_a_time_budget(index):
    now = [0.0]

    class Slow(StandIn):
        def _answer(self, method, *args, timeout):
            # Each call takes 0.2 s of server time, or its whole timeout if that is shorter.
            now[0] += min(0.2, timeout)
            super()._answer(method, *args, timeout=timeout)

    python = Slow("pyright", ("python",))
    provider = composite(index, Pool({"python": python}), budget=0.3, clock=lambda: now[0])
    provider.definitions("allow")
    provider.definitions("RateLimiter")
    provider.definitions("Door")
    # The second call got only what was left of the budget; the third was not made.
    assert [round(call[-1], 2) for call in python.calls] == [0.3, 0.1]
    assert notes_of(provider)[0]["skipped"] == "the budget of 300 ms of server time per retrieval was spent"


def test_references_come_from_the_server_for_the_definition_it_was_asked_about(index):
    python = StandIn("pyright", ("python",))
    provider = composite(index, Pool({"python": python}))
    definition = next(d for d in provider.definitions("RateLimiter.allow") if d.path == "app/limits.py")
    assert provider.references(definition) == {"app/jobs.py": [("allow", "app/jobs.py", 5, "reference")]}
    assert provider.reference_source(definition) == "pyright"
    # Asked at the name on the `def` line, not on the comment above it that also says "allow".
    assert python.calls[-1][:4] == ("references", "app/limits.py", 3, 8)


def test_references_without_a_server_are_the_uses_of_the_name_in_its_language_family(index):
    provider = composite(index, Pool({}))
    python = next(d for d in provider.definitions("allow") if d.path == "app/limits.py")
    assert set(provider.references(python)) == {"app/jobs.py"}
    assert provider.reference_source(python) == PATTERNS
    # TSX code calls TypeScript definitions (one family); neither calls Python's.
    typescript = next(d for d in provider.definitions("allow") if d.path == "web/limits.ts")
    assert set(provider.references(typescript)) == {"web/use.tsx"}


def test_implementations_need_a_server_and_say_why_without_one(index):
    provider = composite(index, Pool({}))
    definition = provider.definitions("RateLimiter")[0]
    with pytest.raises(NeedsServer, match="no server configured for python"):
        provider.implementations(definition)
    with pytest.raises(NeedsServer, match="none is in use"):
        IndexSymbolProvider(index, workspace_tables(index)).implementations(definition)


def test_implementations_from_a_server_map_onto_indexed_definitions(index):
    provider = composite(index, Pool({"python": StandIn("pyright", ("python",))}))
    definition = next(d for d in provider.definitions("RateLimiter") if d.path == "app/limits.py")
    found = provider.implementations(definition)
    assert [(d.qualname, d.start_line, d.end_line, provider.source_of(d)) for d in found] == [
        ("Door", 7, 9, "pyright")]


HIERARCHY = {
    "shapes/base.py": "class Shape:\n    def area(self):\n        raise NotImplementedError\n",
    "shapes/flat.py": (
        "from shapes import base\n"
        "from shapes.base import Shape\n"
        "\n"
        "\n"
        "class Square(Shape):\n"
        "    def area(self):\n"
        "        return 1\n"
        "\n"
        "\n"
        "class Tile(\n"
        "    base.Shape,\n"
        "):\n"
        "    pass\n"
        "\n"
        "\n"
        "class Cube(Square):\n"
        "    def area(self):\n"
        "        return 6\n"
    ),
    # A namesake: this `Shape` is another class, and its subclass is not one of ours.
    "other/shape.py": "class Shape:\n    pass\n\n\nclass Circle(Shape):\n    def area(self):\n        return 3\n",
}


class ReferencesOnly(StandIn):
    """A server like pyright: references, no implementations; it knows which `Shape` each use means."""

    REFERENCES: ClassVar[dict[tuple[str, int], list[Place]]] = {
        ("shapes/base.py", 1): [Place("shapes/flat.py", 2, 23, 2, 28), Place("shapes/flat.py", 5, 13, 5, 18),
                                Place("shapes/flat.py", 11, 9, 11, 14)],
        ("shapes/flat.py", 5): [Place("shapes/flat.py", 16, 10, 16, 16)],
        ("other/shape.py", 1): [Place("other/shape.py", 5, 13, 5, 18)],
    }

    def supports(self, method: str) -> bool:
        return method != "textDocument/implementation"

    def references(self, path: str, line: int, character: int, timeout: float) -> list[Place]:
        self._answer("references", path, line, character, timeout=timeout)
        return self.REFERENCES.get((path, line), [])


@pytest.fixture
def hierarchy(tmp_path: Path) -> Index:
    built = Index(write_tree(tmp_path, HIERARCHY), use_cache=False)
    built.refresh()
    return built


def test_without_implementations_a_server_names_subclasses_through_references_in_base_lists(hierarchy):
    python = ReferencesOnly("pyright", ("python",))
    # A lookup's call budget: a reference call for each class of the hierarchy.
    provider = composite(hierarchy, Pool({"python": python}), max_calls=12)
    shape = next(d for d in provider.definitions("Shape") if d.path == "shapes/base.py")
    found = provider.implementations(shape)
    # Subclasses by plain and qualified base, over two lines, and their subclass; not the namesake's Circle,
    # and not the import line, which is a reference but no base.
    assert [(d.qualname, d.start_line, provider.source_of(d)) for d in found] == [
        ("Square", 5, "pyright"), ("Tile", 10, "pyright"), ("Cube", 16, "pyright")]
    assert [call[1:3] for call in python.calls if call[0] == "references"] == [("shapes/base.py", 1), ("shapes/flat.py", 5),
                                                   ("shapes/flat.py", 10), ("shapes/flat.py", 16)]
    # A method's implementations are the members of its name in the subclasses.
    area = next(d for d in provider.definitions("Shape.area") if d.path == "shapes/base.py")
    assert [(d.qualname, d.start_line) for d in provider.implementations(area)] == [
        ("Square.area", 6), ("Cube.area", 17)]


def test_a_hierarchy_cut_short_by_the_budget_answers_what_it_found_and_is_not_remembered(hierarchy):
    python = ReferencesOnly("pyright", ("python",))
    pool = Pool({"python": python})
    provider = _question(hierarchy, pool, max_calls=2)
    shape = next(d for d in provider.definitions("Shape") if d.path == "shapes/base.py")
    assert [d.qualname for d in provider.implementations(shape)] == ["Square", "Tile"]
    assert "the budget of 2 server calls" in notes_of(provider)[0]["skipped"]
    again = _question(hierarchy, pool)
    assert [d.qualname for d in again.implementations(shape)] == ["Square", "Tile", "Cube"]
    assert notes_of(again)[0]["remembered"] == 0


def test_a_function_has_no_implementations_through_references(hierarchy):
    python = ReferencesOnly("pyright", ("python",))
    provider = composite(hierarchy, Pool({"python": python}))
    (hierarchy.root / "shapes/tools.py").write_text("def scale(shape):\n    return shape\n")
    hierarchy.set_file("shapes/tools.py", "def scale(shape):\n    return shape\n")
    scale = provider.definitions("scale")[0]
    with pytest.raises(NeedsServer, match="`scale` is not a class or a member of one"):
        provider.implementations(scale)


def test_a_position_resolves_to_the_indexed_definition_a_server_names(index):
    python = StandIn("pyright", ("python",))
    provider = composite(index, Pool({"python": python}))
    resolved = provider.resolve("app/jobs.py", 5, 20)
    assert (resolved.qualname, resolved.path, provider.source_of(resolved)) == (
        "RateLimiter.allow", "app/limits.py", "pyright")
    assert python.calls[-1][:4] == ("definition", "app/jobs.py", 5, 20)
    assert "app/jobs.py" in python.synced
    # A definition outside the index (a library's) is no answer; nor is a language without a server.
    assert provider.resolve("app/limits.py", 3, 9) is None
    assert provider.resolve("web/use.tsx", 2, 40) is None


def test_hover_text_names_its_source(index):
    provider = composite(index, Pool({"python": StandIn("pyright", ("python",))}))
    definition = next(d for d in provider.definitions("allow") if d.path == "app/limits.py")
    assert provider.hover(definition) == ("(method) def allow(self, key) -> bool", "pyright")
    assert composite(index, Pool({})).hover(definition) is None


def test_context_items_say_which_source_answered(index):
    provider = composite(index, Pool({"python": StandIn("pyright", ("python",))}))
    # Places are not merged here, so that the class and its method each show what answered them.
    result = context_of(index, ContextRequest("why does `RateLimiter.allow` deny everything"), provider=provider,
                        config=DEFAULT_RANKING.without("window"))
    method = next(item for item in result["items"] if item["qualname"] == "RateLimiter.allow")
    assert method["path"] == "app/limits.py"
    assert "pyright" in method["sources"]
    assert any(reason.endswith("(pyright)") for reason in method["why"])
    # The stand-in does not know the class: the patterns' answer stands for it.
    assert "pyright" not in {item["qualname"]: item["sources"] for item in result["items"]}["RateLimiter"]
    assert result["language_servers"][0]["server"] == "pyright"


def test_the_implementations_strategy_reports_a_missing_server(index):
    result = context_of(index, ContextRequest("which classes implement `RateLimiter`?"),
                           provider=composite(index, Pool({})))
    skipped = {entry["strategy"]: entry["reason"] for entry in result["strategies_skipped"]}
    assert skipped["implementations"].startswith("implementations need a language server: no server configured")


def _question(index: Index, pool: Pool, **options) -> CompositeSymbolProvider:
    """The provider of one question, as the session makes it: the index's version at the time."""
    return composite(index, pool, version=index.version, **options)


def test_answers_are_remembered_across_questions_until_the_indexed_text_changes(index):
    python = StandIn("pyright", ("python",))
    pool = Pool({"python": python})
    first = _question(index, pool)
    definition = next(d for d in first.definitions("allow") if d.path == "app/limits.py")
    first.references(definition)
    assert [call[0] for call in python.calls] == ["workspace_symbols", "references"]

    again = _question(index, pool)
    remembered = next(d for d in again.definitions("allow") if d.path == "app/limits.py")
    assert again.source_of(remembered) == "pyright"
    assert again.references(remembered) == {"app/jobs.py": [("allow", "app/jobs.py", 5, "reference")]}
    assert again.reference_source(remembered) == "pyright"
    assert len(python.calls) == 2, "the second question made no call"
    assert notes_of(again)[0] | {"languages": None} == {"server": "pyright", "languages": None, "state": "ready",
                                                     "calls": 0, "answered": 0, "remembered": 2, "skipped": None}

    # The same text again (an editor re-opening a file) keeps the answers; an edit anywhere drops them.
    index.set_file("app/jobs.py", (index.root / "app/jobs.py").read_text())
    _question(index, pool).definitions("allow")
    assert len(python.calls) == 2
    index.set_file("app/jobs.py", "from app.limits import RateLimiter\n")
    _question(index, pool).definitions("allow")
    assert len(python.calls) == 3


def test_empty_and_failed_answers_are_not_remembered(index):
    python = StandIn("pyright", ("python",))
    pool = Pool({"python": python})
    # The stand-in answers [] for `RateLimiter`, as a loading server would: the next question asks again.
    _question(index, pool).definitions("RateLimiter")
    _question(index, pool).definitions("RateLimiter")
    assert [call[:2] for call in python.calls] == [("workspace_symbols", "RateLimiter")] * 2
    python.fail = "timeout"
    _question(index, pool).definitions("allow")
    python.fail = None
    provider = _question(index, pool)
    provider.definitions("allow")
    assert len(python.calls) == 4 and notes_of(provider)[0]["answered"] == 1


def test_a_remembered_answer_costs_no_call_and_holds_while_its_server_restarts(index):
    python = StandIn("pyright", ("python",))
    pool = Pool({"python": python})
    _question(index, pool).definitions("allow")
    python.state = "restarting"
    # One call allowed: the remembered definitions take none of it, and the server is not asked while down.
    provider = _question(index, pool, max_calls=1)
    found = provider.definitions("allow")
    assert "pyright" in {provider.source_of(d) for d in found}
    assert len(python.calls) == 1
    assert notes_of(provider)[0]["remembered"] == 1 and notes_of(provider)[0]["state"] == "restarting"


def test_without_a_version_nothing_is_remembered(index):
    python = StandIn("pyright", ("python",))
    pool = Pool({"python": python})
    composite(index, pool).definitions("allow")
    composite(index, pool).definitions("allow")
    assert len(python.calls) == 2


def test_name_position_skips_comments_and_decorators():
    from rag_lsp.model import Definition

    text = "@allow.cache\n# allow it\ndef allow():\n    pass\n"
    definition = Definition("allow", "allow", "function", "a.py", 1, 4, 0, len(text))
    assert name_position(text, definition) == (3, 4)
    assert name_position("x = 1\n", definition) is None
