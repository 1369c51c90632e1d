"""What completion asks a warm language server at the cursor, and when an answer may be cached without it.

A stand-in client makes the rules observable; tests/e2e/test_server_langservers.py asks real pyright.
"""

from __future__ import annotations

from rag_lsp.completion.server_hints import _asks, cursor_hints
from rag_lsp.langservers.client import Place, ServerCallError
from rag_lsp.langservers.spec import ServerSpec
from rag_lsp.model import Definition

LIMITER = Definition("Limiter", "Limiter", "class", "limits.py", 3, 9, 0, 100)


class StandIn:
    def __init__(self, state="ready", warming=False, fail=False):
        self.spec = ServerSpec("pyright", "/bin/pyright", languages=("python",))
        self.state, self.warming, self.fail = state, warming, fail
        self.asked: list[tuple] = []
        self.started = 0

    def ensure_started(self):
        self.started += 1

    def sync(self, path, text, language_id):
        self.synced = text

    def type_definition(self, path, line, character, timeout):
        self.asked.append(("type_definition", line, character))
        if self.fail:
            raise ServerCallError("timeout", "typeDefinition timed out")
        return [Place("limits.py", 3, 6, 3, 13)]

    def definition(self, path, line, character, timeout):
        self.asked.append(("definition", line, character))
        return [Place("limits.py", 5, 8, 5, 13)]


class Pool:
    def __init__(self, client):
        self.client = client

    def client_for(self, language):
        return self.client if language == "python" else "no server configured for go"


def hints(client, line_text: str, language: str = "python", left: float = 1.0):
    return cursor_hints(Pool(client), lambda path: [LIMITER], "app.py", f"x = 1\n{line_text}\n", line_text,
                        language, 2, len(line_text), lambda: left)


def test_the_receiver_and_the_open_call_are_asked_at_their_names():
    assert _asks("        self.limiter.al") == [("type_definition", 13, "the type of `limiter` at the cursor")]
    assert _asks("    total = ledger.post(entry, ") == [("definition", 19, "the call `ledger.post(` being typed")]
    assert _asks("    send(limiter.") == [("type_definition", 9, "the type of `limiter` at the cursor"),
                                         ("definition", 4, "the call `send(` being typed")]
    assert _asks("    x = [1, 2") == [] and _asks("    return") == []


def test_a_ready_server_answers_with_indexed_definitions_and_the_answer_is_final():
    client = StandIn()
    found, final = hints(client, "    limiter.")
    assert [(h.definition, h.server) for h in found] == [(LIMITER, "pyright")] and final
    assert client.asked == [("type_definition", 2, 4)]


def test_nothing_to_ask_or_no_server_is_final():
    assert hints(StandIn(), "    x = 1") == ([], True)
    assert hints(StandIn(), "    limiter.", language="go") == ([], True)


def test_a_server_that_could_answer_later_makes_the_answer_provisional():
    starting = StandIn(state="starting")
    assert hints(starting, "    limiter.") == ([], False) and starting.started == 1
    assert hints(StandIn(warming=True), "    limiter.") == ([], False)
    assert hints(StandIn(), "    limiter.", left=0.001) == ([], False)
    assert hints(StandIn(fail=True), "    limiter.") == ([], False)
    # A server that is down will not answer later either.
    assert hints(StandIn(state="down"), "    limiter.") == ([], True)
