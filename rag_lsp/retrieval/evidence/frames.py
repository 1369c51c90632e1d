"""Stack frames: what one is, how a pasted path is normalised, and which frames are library code.

Every trace reader (``traces.py``, ``native_traces.py``) produces these, so a
frame means the same thing whatever language printed it: a path as written
(another machine's, matched onto the checkout later by suffix), a line, a
function and, where the format has one, a module; library frames (site-packages,
node_modules, a runtime) are marked so that strategies can skip them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Frame:
    """One stack frame as the trace wrote it.

    ``path`` is as written (usually another machine's), with forward slashes;
    it is None when the frame names only a module or class. ``depth`` is 0 for
    the innermost frame of its trace. ``library`` is True when the frame is
    obviously not user code (site-packages, node_modules, a language runtime).
    """

    path: str | None
    line: int | None
    column: int | None
    function: str | None
    module: str | None
    language: str
    depth: int
    library: bool


@dataclass(slots=True)
class RawFrame:
    """A frame before its trace is complete: its depth is not known yet."""

    language: str
    path: str | None = None
    line: int | None = None
    column: int | None = None
    function: str | None = None
    module: str | None = None
    # None lets `_is_library` decide; readers set it when the format says so.
    library: bool | None = None


# A trace reader gets all lines and an index; it returns the traces it read and
# the index after them, or None when the line does not start one of its traces.
Reader = Callable[[list[str], int], "tuple[list[list[Frame]], int] | None"]

# Line numbers longer than this are not line numbers (and int() refuses huge ones).
_MAX_NUMBER_DIGITS = 9

# Terminal colours in pasted output: `\x1b[31mFAILED\x1b[0m`.
ANSI = re.compile(r"\x1b\[[0-9;?]*+[ -/]*+[@-~]")
# `https://host:8080/static/app.js`: a scheme with an authority.
_URL = re.compile(r"[A-Za-z][\w+.-]*+://[^/]*+(?P<path>[^?#]*+)")
# `/C:/src/a.js`, left by a `file:///C:/src/a.js` URL on Windows.
_SLASH_DRIVE = re.compile(r"/[A-Za-z]:/")


def clean_lines(text: str) -> list[str]:
    """The lines of pasted output without colour codes or trailing blanks.

    Shared by the evidence parsers so each sees the same lines.
    """
    return [line.rstrip() for line in ANSI.sub("", text).splitlines()]


def number(text: str | None) -> int | None:
    """A line or column number, or None when ``text`` is not a plausible one."""
    if not text or len(text) > _MAX_NUMBER_DIGITS or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


def normalise_path(raw: str) -> str:
    """A path as written, with forward slashes, URLs reduced to their path and no leading ``./``.

    ``file:///C:/x/y.js`` → ``C:/x/y.js``; ``http://localhost:8080/static/a.js``
    → ``/static/a.js``; ``.\\src\\a.py`` → ``src/a.py``.
    """
    path = raw.strip().replace("\\", "/")
    if path.startswith("file://"):
        path = path[len("file://"):]
        if _SLASH_DRIVE.match(path):
            path = path[1:]
    elif match := _URL.match(path):
        path = match["path"] or "/"
    path = path.replace("/./", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def split_location(location: str) -> tuple[str, int, int | None] | None:
    """``path:line[:column]`` split from the right, so drive letters and URLs keep their colons."""
    head, colon, last = location.rpartition(":")
    if not colon or number(last) is None:
        return None
    before, colon, middle = head.rpartition(":")
    if colon and before and number(middle) is not None:
        return before, int(middle), int(last)
    return (head, int(last), None) if head else None


def plausible_path(path: str) -> bool:
    """Whether a location's path names a file rather than V8's ``<anonymous>`` or an eval wrapper."""
    return bool(path) and path not in ("<anonymous>", "native", "unknown") and not any(
        mark in path for mark in ("(", ")", ", ")
    )


# ---------------------------------------------------------------------------
# What counts as library code.

# Directory names that only ever hold other people's code.
_LIBRARY_SEGMENTS = frozenset({
    "site-packages", "dist-packages", "node_modules", "bower_components", "jspm_packages", "vendor",
    "gems", ".pub-cache", ".cargo", ".rustup", ".m2", ".pyenv", ".rbenv", ".rvm", ".nvm",
    "sysdeps", "csu", "nptl", "libio", "libsanitizer", "compiler-rt",
})
# Path beginnings of system installs and runtimes' pseudo-files.
_LIBRARY_PREFIXES = (
    "/usr/lib/", "/usr/lib64/", "/usr/local/lib/", "/usr/include/", "/usr/local/include/", "/usr/share/",
    "/usr/local/go/", "/rustc/", "/System/Library/", "/Library/Frameworks/",
    "<frozen ", "<internal:", "node:", "internal/", "dart:",
)
# A Python install's standard library: `/home/u/.local/lib/python3.11/json/decoder.py`.
_PYTHON_STDLIB = re.compile(r"(?:^|/)[Ll]ib/python[0-9][0-9.]*+/")
# Go's module cache and standard library sources wherever GOROOT is.
_GO_LIBRARY_PARTS = ("/pkg/mod/", "/src/runtime/", "/libexec/src/")
# First elements of Go standard library import paths (user packages are `main` or start with a domain).
_GO_STDLIB = frozenset({
    "archive", "bufio", "bytes", "cmp", "compress", "container", "context", "crypto", "database", "debug",
    "embed", "encoding", "errors", "expvar", "flag", "fmt", "go", "hash", "html", "image", "internal",
    "io", "iter", "log", "maps", "math", "mime", "net", "os", "path", "plugin", "reflect", "regexp",
    "runtime", "slices", "sort", "strconv", "strings", "sync", "syscall", "testing", "text", "time",
    "unicode", "unique", "unsafe", "panic",
})
_JVM_LIBRARY_PACKAGES = ("java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.")
JVM_LIBRARY_MODULES = ("java.", "jdk.")
_RUST_LIBRARY_CRATES = frozenset({"std", "core", "alloc", "test", "proc_macro", "panic_unwind", "backtrace"})
_C_LIBRARY_FUNCTIONS = ("__libc_", "__interceptor_", "__asan", "__sanitizer", "_start", "std::", "__gnu_cxx::")
ELIXIR_LIBRARY_APPS = frozenset({
    "elixir", "stdlib", "kernel", "erts", "compiler", "ex_unit", "iex", "logger", "mix", "eex",
    "crypto", "ssl", "inets", "public_key",
})
_DART_LIBRARY_PACKAGES = frozenset({"flutter", "flutter_test"})


def _library_path(path: str) -> bool:
    """Whether a path lies in a dependency directory, a system install or a runtime's pseudo-file."""
    if path.startswith(_LIBRARY_PREFIXES) or _PYTHON_STDLIB.search(path):
        return True
    return any(segment in _LIBRARY_SEGMENTS for segment in path.split("/")[:-1])


def _library_by_language(raw: RawFrame) -> bool:
    """Runtime code recognised by its module or function name, per language."""
    module = raw.module or ""
    function = raw.function or ""
    if raw.language == "java":
        return module.startswith(_JVM_LIBRARY_PACKAGES) or module in ("java", "javax", "kotlin", "scala")
    if raw.language == "csharp":
        return function.startswith(("System.", "Microsoft."))
    if raw.language == "go":
        root = (module or function).split("/", 1)[0].split(".", 1)[0]
        return root in _GO_STDLIB or any(part in (raw.path or "") for part in _GO_LIBRARY_PARTS)
    if raw.language == "rust":
        return module.split("::", 1)[0] in _RUST_LIBRARY_CRATES or function.startswith(("__rust", "rust_"))
    if raw.language == "c":
        return function.startswith(_C_LIBRARY_FUNCTIONS)
    if raw.language == "elixir":
        return module.startswith(":")
    if raw.language == "dart":
        return module in _DART_LIBRARY_PACKAGES
    return False


def _is_library(raw: RawFrame) -> bool:
    if raw.library is not None:
        return raw.library
    return bool(raw.path and _library_path(raw.path)) or _library_by_language(raw)


def finish(raws: Iterable[RawFrame]) -> list[Frame]:
    """Number a trace's frames innermost first, dropping frames that name neither a file nor a module."""
    frames: list[Frame] = []
    for raw in raws:
        if raw.path is None and raw.module is None:
            continue
        frames.append(Frame(
            raw.path, raw.line, raw.column, raw.function, raw.module, raw.language, len(frames), _is_library(raw)
        ))
    return frames


def traces_of(*traces: list[Frame]) -> list[list[Frame]]:
    return [trace for trace in traces if trace]
