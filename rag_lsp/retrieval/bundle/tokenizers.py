"""Real token counts: the cl100k and o200k encodings that ``bpe-openai`` ships, the estimate as the fallback.

A budget in estimated tokens is a guess that errs high (``retrieval/token_count.py``); a client that pastes
the bundle into a model's prompt wants the model's own count. ``bpe-openai`` bundles both encodings in its
wheel and counts exactly as tiktoken does, with nothing downloaded. Its package ``__init__`` builds a Python
registry of every model from the vocabulary files, which takes seconds; only the Rust extension is needed to
count, so it is loaded on its own (tens of milliseconds), and each encoding once per process on first use.
If the extension cannot be loaded, the estimate counts and ``Tokenizer.name`` says so, with the reason.

Counts of whole lines are what a cut needs: a bundle is cut at line ends, so that code stays readable.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from rag_lsp.retrieval.token_count import estimate_tokens, leading_lines

# The encodings a client may ask for, by the names the protocol uses, and ``estimate``.
ENCODINGS = {"cl100k": "cl100k_base", "o200k": "o200k_base"}
TOKENIZERS = (*ENCODINGS, "estimate")
DEFAULT_TOKENIZER = "cl100k"
_EXTENSION = "bpe_openai._bindings"


class _Counter(Protocol):
    def count(self, text: str) -> int: ...


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """Counts tokens with one encoding; ``name`` is the one that counted (``estimate`` after a fallback), and
    ``fallback`` why the asked one could not."""

    name: str
    counter: _Counter | None = None
    fallback: str | None = None

    def count(self, text: str) -> int:
        if not text:
            return 0
        return self.counter.count(text) if self.counter is not None else estimate_tokens(text)

    def truncate(self, text: str, budget: int) -> str:
        """The longest prefix of whole lines of ``text`` whose count fits ``budget``."""
        return truncate_lines(self.count, text, budget)


# Counts kept per encoding, across answers (the oldest counted is forgotten first), keyed by a digest of the
# text: the texts themselves (places of a few kilobytes) would keep tens of megabytes alive in a long session.
COUNTS_KEPT = 16384
_KEPT: dict[str, dict[bytes, int]] = {}
_KEPT_LOCK = threading.Lock()


class Remembered:
    """A tokenizer whose counts are kept: packing counts a place's text when it cuts it to its limit, when it
    checks the raw-code cap and when it takes it, and the next question shows many of the same places; each
    count is a pass over the text. The counts are shared by every answer of the process, per encoding."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        with _KEPT_LOCK:
            self._counts = _KEPT.setdefault(tokenizer.name, {})

    def count(self, text: str) -> int:
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        found = self._counts.get(key)
        if found is None:
            found = self.tokenizer.count(text)
            with _KEPT_LOCK:
                self._counts[key] = found
                if len(self._counts) > COUNTS_KEPT:
                    del self._counts[next(iter(self._counts))]
        return found

    def truncate(self, text: str, budget: int) -> str:
        """The longest prefix of whole lines of ``text`` whose count fits ``budget``."""
        return truncate_lines(self.count, text, budget)


def truncate_lines(count: Callable[[str], int], text: str, budget: int) -> str:
    """The longest prefix of whole lines of ``text`` whose ``count`` fits ``budget``."""
    if count(text) <= budget:
        return text
    kept = leading_lines(count, text, budget)
    # Counts of lines add up to about the count of their text; the joined text is checked, line by line
    # shorter, until it fits.
    while kept and count("".join(kept).rstrip("\n")) > budget:
        kept.pop()
    return "".join(kept).rstrip("\n")


_LOCK = threading.Lock()
_LOADED: dict[str, Tokenizer] = {}


def tokenizer(name: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """The tokenizer called ``name`` (one of ``TOKENIZERS``), loaded once per process."""
    with _LOCK:
        found = _LOADED.get(name)
        if found is None:
            found = _LOADED[name] = _load(name)
        return found


def _load(name: str) -> Tokenizer:
    if name not in ENCODINGS:
        return Tokenizer("estimate")
    try:
        extension = _extension()
        return Tokenizer(name, extension.tokenizer_for_encoding(ENCODINGS[name]))
    except Exception as exc:  # noqa: BLE001 - an absent, broken or changed package: the estimate counts.
        return Tokenizer("estimate", fallback=f"{name} is unavailable ({type(exc).__name__}: {exc})")


def _extension():
    """``bpe_openai._bindings`` loaded without running ``bpe_openai/__init__.py`` (see the module docstring)."""
    package = importlib.util.find_spec("bpe_openai")
    if package is None or not package.submodule_search_locations:
        raise ImportError("bpe-openai is not installed")
    for folder in package.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(folder) / f"_bindings{suffix}"
            if path.is_file():
                loader = importlib.machinery.ExtensionFileLoader(_EXTENSION, str(path))
                spec = importlib.util.spec_from_file_location(_EXTENSION, path, loader=loader)
                if spec is None:
                    break
                module = importlib.util.module_from_spec(spec)
                loader.exec_module(module)
                return module
    raise ImportError("bpe-openai has no compiled tokenizer for this platform")
