"""``rag-lsp context --format prompt``: the prompt block is the same bytes in two processes (hash seeds differ,
so no set or dictionary order leaks into it), and ``--known`` turns a file the caller holds into one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import LEDGER_WORKSPACE, write_tree

RAG_LSP = Path(sys.executable).parent / "rag-lsp"
EXTRA = {
    "shop/cart.py": "from shop.ledger import Ledger\n\n\ndef checkout(ledger, entry):\n    ledger.post(entry)\n",
    "tests/test_ledger.py": "from shop.ledger import Ledger\n\n\ndef test_post():\n    Ledger().post(None)\n",
    "docs/ledger.md": "# Ledger\n\nThe `Ledger` posts entries per currency.\n",
    "config/shop.yaml": "ledger:\n  class: Ledger\n",
}


def prompt(root: Path, seed: str, *extra: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run([str(RAG_LSP), "context", "how does Ledger.post work", "--root", str(root), "--no-cache",
                           "--format", "prompt", *extra], capture_output=True, text=True, env=env, timeout=120,
                          check=True)
    return done.stdout


def test_the_prompt_block_is_the_same_bytes_in_two_processes(tmp_path):
    root = write_tree(tmp_path / "ws", {**LEDGER_WORKSPACE, **EXTRA})
    first = prompt(root, "1")
    assert first == prompt(root, "2")
    assert first.startswith("Likely relevant places, ranked (found by ") and "\n## docs\n" in first


def test_a_known_file_comes_back_as_one_line(tmp_path):
    root = write_tree(tmp_path / "ws", {**LEDGER_WORKSPACE, **EXTRA})
    blob = subprocess.run(["git", "hash-object", str(root / "shop/ledger.py")], capture_output=True, text=True,
                          check=True).stdout.strip()
    held = prompt(root, "1", "--known", f"shop/ledger.py={blob}")
    assert "- already read, unchanged: shop/ledger.py" in held and "def post(self, entry):" not in held
