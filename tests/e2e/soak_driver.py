"""The soak: many random edits across many open documents, with context and completion questions asked
while they arrive, the server's memory sampled all along; then its answers compared with a fresh index of
the final texts. ``tests/e2e/test_server_soak.py`` runs a short one, ``bench/soak_server.py`` the long one.

Edits come from ``tests/edit_oracle.py`` (an independent model of LSP edits, UTF-16 positions, non-ASCII
text); each is sent as a ``didChange`` with the next version, and the model keeps the text the server must
end up with. A second thread asks ``ragLsp/context`` and ``ragLsp/completionContext`` at a cursor in a
document being edited; each must be answered (a result, or ``InvalidParams`` when the edits moved the text
under the cursor before the question was read).
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from edit_oracle import apply, random_edit, split_lines
from raw_client import RawServer

from rag_lsp.index.root_index import Index

QUESTIONS = ("handle request value", "render widget", "total price order", "def class return",
             "why does parse_order raise KeyError", "cache invalidate key")


def module(i: int) -> str:
    """A Python module of a few classes and functions, different for every ``i``."""
    return (f'"""Module {i}: orders, widgets and caches."""\nfrom pkg.module_{(i + 1) % 50:02} import helper_{i}\n\n\n'
            f"class Order{i}:\n    \"\"\"An order of {i} items.\"\"\"\n\n    def __init__(self, items):\n"
            f"        self.items = items\n\n    def total_price(self):\n        return sum(item.price for item in "
            f"self.items) * {i}\n\n\ndef parse_order_{i}(payload):\n    return Order{i}(payload['items'])\n\n\n"
            f"def render_widget_{i}(widget, cache):\n    key = widget.name + '{i}'\n    if key in cache:\n"
            f"        return cache[key]\n    cache[key] = widget.render()\n    return cache[key]\n")


def workspace(root: Path, documents: int) -> dict[str, str]:
    files = {f"pkg/module_{i:02}.py": module(i) for i in range(documents)}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return files


@dataclass
class SoakFigures:
    edits: int = 0
    documents: int = 0
    questions: int = 0
    answered: int = 0
    invalid_params: int = 0
    other_errors: list = field(default_factory=list)
    unanswered: list = field(default_factory=list)
    # (seconds since start, edits sent so far, server RSS in MiB)
    memory: list = field(default_factory=list)
    seconds: float = 0.0


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def soak(server: RawServer, root: Path, edits: int, documents: int, seed: int, every: int = 25,
         sample_seconds: float = 0.25) -> tuple[SoakFigures, dict[str, str]]:
    """Open ``documents`` buffers, send ``edits`` random edits across them while asking questions every
    ``every`` edits; returns the figures and the final texts (relative path → text)."""
    rng = random.Random(seed)
    texts = workspace(root, documents)
    figures = SoakFigures(documents=documents)
    uris = {path: (root / path).as_uri() for path in texts}
    versions = dict.fromkeys(texts, 1)
    for path, text in texts.items():
        server.notify("textDocument/didOpen", {"textDocument": {"uri": uris[path], "languageId": "python",
                                                               "version": 1, "text": text}})
    started = time.monotonic()
    done = threading.Event()
    sent_edits = [0]
    questions: list[tuple[int, str]] = []
    lock = threading.Lock()

    def sample() -> None:
        while not done.is_set():
            figures.memory.append((round(time.monotonic() - started, 2), sent_edits[0],
                                   round(rss_mib(server.process.pid), 1)))
            done.wait(sample_seconds)

    def ask(path: str, text: str) -> None:
        lines = split_lines(text)
        line = rng.randrange(len(lines))
        position = {"line": line, "character": len(lines[line][1].encode("utf-16-le")) // 2}
        document = {"uri": uris[path]}
        for method, params in (("ragLsp/context", {"query": rng.choice(QUESTIONS), "topK": 5}),
                               ("ragLsp/completionContext", {"textDocument": document, "position": position})):
            with lock:
                questions.append((server.request_async(method, params), method))

    sampler = threading.Thread(target=sample, name="soak-memory", daemon=True)
    sampler.start()
    paths = sorted(texts)
    for number in range(edits):
        path = rng.choice(paths)
        changes = []
        for _ in range(rng.randrange(1, 3)):
            edit = random_edit(rng, texts[path])
            texts[path] = apply(texts[path], edit)
            sl, sc, el, ec, new = edit
            changes.append({"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
                            "text": new})
        versions[path] += 1
        server.notify("textDocument/didChange", {"textDocument": {"uri": uris[path], "version": versions[path]},
                                                 "contentChanges": changes})
        sent_edits[0] = number + 1
        if number % every == 0:
            ask(path, texts[path])
    figures.edits = edits
    for request_id, method in questions:
        figures.questions += 1
        try:
            response = server.response(request_id, 120)
        except TimeoutError:
            figures.unanswered.append((request_id, method))
            continue
        if "error" not in response:
            figures.answered += 1
        elif response["error"]["code"] == -32602:
            figures.invalid_params += 1
        else:
            figures.other_errors.append((method, response["error"]))
    done.set()
    sampler.join()
    figures.seconds = round(time.monotonic() - started, 1)
    return figures, texts


def comparable(items: list[dict]) -> list[tuple]:
    return [(i["path"], i["start_line"], i["end_line"], i["qualname"], i["content"], round(i["score"], 9))
            for i in items]


def fresh_index(directory: Path, texts: dict[str, str]) -> Index:
    """A fresh index, without a cache, of the final texts written under ``directory``."""
    for path, text in texts.items():
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_text(text, encoding="utf-8", newline="")
    index = Index(directory, use_cache=False)
    index.refresh()
    return index
