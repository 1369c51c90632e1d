"""Document sync (open, change, LRU close), position encodings, and calls from several threads at once."""

from __future__ import annotations

import threading
import time

import pytest

from rag_lsp.langservers.client import Place, ServerUnavailable

from .lsp_helpers import ready

TIMEOUT = 0.5


def document_notifications(client) -> list[tuple]:
    """(method, path, version) of every didOpen/didChange/didClose the fake server received."""
    seen = []
    for note in client.request("fake/log", None, 2.0)["notifications"]:
        if note["method"].startswith("textDocument/"):
            document = note["params"]["textDocument"]
            path = document["uri"].rsplit("/", 1)[1]
            seen.append((note["method"].split("/")[1], path, document.get("version")))
    return seen


def test_sync_opens_once_changes_only_on_new_text_and_sends_full_text(make_client):
    client = ready(make_client("ok"))
    client.sync("a.py", "x = 1\n", "python")
    client.sync("a.py", "x = 1\n", "python")
    client.sync("a.py", "x = 2\n", "python")
    client.sync("b.ts", "let y = 2\n", "typescript")
    assert document_notifications(client) == [("didOpen", "a.py", 1), ("didChange", "a.py", 2), ("didOpen", "b.ts", 1)]
    notes = client.request("fake/log", None, 2.0)["notifications"]
    opened = next(n for n in notes if n["method"] == "textDocument/didOpen")["params"]["textDocument"]
    assert (opened["languageId"], opened["text"]) == ("python", "x = 1\n")
    changed = next(n for n in notes if n["method"] == "textDocument/didChange")["params"]
    assert changed["contentChanges"] == [{"text": "x = 2\n"}]


def test_a_document_is_checked_when_the_server_publishes_its_diagnostics_after_the_last_sync(make_client):
    client = ready(make_client("ok"))
    client.sync("a.py", "x = 1\n", "python")
    assert client.wait_checked("a.py", 2.0)
    # New text is not checked until the server says so again; this server never checks "no-check" text.
    client.sync("a.py", "no-check\n", "python")
    started = time.monotonic()
    assert not client.wait_checked("a.py", 0.3)
    assert time.monotonic() - started < 1.0
    client.sync("a.py", "x = 3\n", "python")
    assert client.wait_checked("a.py", 2.0)
    # Diagnostics of a document rag_lsp never opened are not remembered.
    assert not client.wait_checked("elsewhere.py", 0.2)


def test_beyond_the_limit_the_least_recently_used_document_is_closed(make_client):
    client = ready(make_client("ok", max_open_documents=2))
    client.sync("a.py", "a", "python")
    client.sync("b.py", "b", "python")
    client.sync("a.py", "a", "python")  # a is now the most recently used
    client.sync("c.py", "c", "python")  # closes b
    client.definition("a.py", 1, 0, TIMEOUT)  # a request counts as a use too
    client.sync("d.py", "d", "python")  # closes c
    client.sync("b.py", "b", "python")  # reopened from version 1; closes a
    assert document_notifications(client) == [
        ("didOpen", "a.py", 1),
        ("didOpen", "b.py", 1),
        ("didOpen", "c.py", 1),
        ("didClose", "b.py", None),
        ("didOpen", "d.py", 1),
        ("didClose", "c.py", None),
        ("didOpen", "b.py", 1),
        ("didClose", "a.py", None),
    ]


def test_sync_before_the_server_is_ready_says_so(make_client):
    client = make_client("hang", start_timeout=5.0)
    with pytest.raises(ServerUnavailable, match="^starting$"):
        client.sync("a.py", "x", "python")


# "name" starts at code point 10; before it, 😀 is 2 UTF-16 units / 4 UTF-8 bytes and é 1 unit / 2 bytes.
LINE = 's = "😀é"; name = 1'


@pytest.mark.parametrize(("encoding", "units"), [("utf-16", 11), ("utf-8", 14)])
def test_positions_are_converted_to_the_servers_encoding_and_back(make_client, tmp_path, encoding, units):
    (tmp_path / "disk.txt").write_text("😀😀ab\n", encoding="utf-8")
    client = ready(make_client("ok", "--encoding", encoding))
    client.sync("e.py", f"first line\n{LINE}\n", "python")
    assert client.definition("e.py", 2, 10, TIMEOUT) == [Place("e.py", 2, 10, 2, 11)]
    sent = client.request("fake/log", None, 2.0)["requests"][0]["params"]["position"]
    assert sent == {"line": 1, "character": units}
    # disk.txt was never synced: its line is read from disk to convert characters 4..5.
    on_disk = client.references("e.py", 2, 10, TIMEOUT)[1]
    assert on_disk == (Place("disk.txt", 1, 2, 1, 3) if encoding == "utf-16" else Place("disk.txt", 1, 1, 1, 2))


def test_characters_in_unreadable_files_are_kept_as_the_server_sent_them(make_client, tmp_path):
    (tmp_path / "disk.txt").write_bytes(b"\xff\xfe not utf-8")
    client = ready(make_client("ok", "--encoding", "utf-8"))
    assert client.references("gone.py", 1, 7, TIMEOUT) == [Place("gone.py", 1, 7, 1, 8), Place("disk.txt", 1, 4, 1, 5)]


def test_unsynced_request_files_are_converted_from_disk(make_client, tmp_path):
    (tmp_path / "e.py").write_text(f"{LINE}\n", encoding="utf-8")
    client = ready(make_client("ok", "--encoding", "utf-8"))
    assert client.definition("e.py", 1, 10, TIMEOUT) == [Place("e.py", 1, 10, 1, 11)]
    assert client.request("fake/log", None, 2.0)["requests"][0]["params"]["position"]["character"] == 14


def test_two_threads_calling_at_once_wait_for_their_own_answers(make_client):
    client = ready(make_client("ok"))
    answers = {}

    def call(name: str) -> None:
        answers[name] = client.request("fake/sleep", {"seconds": 0.4, "echo": name}, 2.0)

    threads = [threading.Thread(target=call, args=(name,)) for name in ("first", "second")]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(3.0)
    assert answers == {"first": "first", "second": "second"}
    assert time.monotonic() - started < 0.75  # concurrent, not one after the other


def test_many_threads_with_their_own_documents(make_client):
    client = ready(make_client("ok", max_open_documents=4))
    failures = []

    def work(n: int) -> None:
        path = f"f{n}.py"
        for line in range(1, 6):
            client.sync(path, f"# {n}\n" * line, "python")
            if client.definition(path, line, 0, 2.0) != [Place(path, line, 0, line, 1)]:
                failures.append((n, line))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10.0)
    assert failures == []
    opened = [n for n in document_notifications(client) if n[0] == "didOpen"]
    closed = [n for n in document_notifications(client) if n[0] == "didClose"]
    assert len(opened) - len(closed) == 4
