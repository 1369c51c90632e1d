"""Stack frames from pasted traces, in a dozen languages' formats.

A developer who asks why something fails usually pastes a trace, and its
frames are the strongest evidence of where to look: a path (from another
machine, so it is matched onto the checkout later by path suffix), a line, a
function and, where the format has one, a module. This module only reads
text; resolving the frames is a retrieval strategy's job.

Each format has a reader that recognises the first line of one of its traces
and consumes the lines that belong to it. Readers use anchored patterns whose
variable parts cannot backtrack into each other, and plain string slicing for
the rest, so parsing stays linear in the input whatever the input is.

Frames of one trace are numbered innermost first (depth 0 is where the error
happened). Traces come in the order the failures happened, root cause first:
Python prints a chain that way already ("During handling of the above
exception..." follows the original error), while the JVM prints the wrapper
first and its ``Caused by:`` causes after it, so a JVM exception's traces are
returned in reverse. Every other format's traces keep their printed order.
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
class _Raw:
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
_Reader = Callable[[list[str], int], "tuple[list[list[Frame]], int] | None"]

# Line numbers longer than this are not line numbers (and int() refuses huge ones).
_MAX_NUMBER_DIGITS = 9

# Terminal colours in pasted output: `\x1b[31mFAILED\x1b[0m`.
_ANSI = re.compile(r"\x1b\[[0-9;?]*+[ -/]*+[@-~]")
# `https://host:8080/static/app.js`: a scheme with an authority.
_URL = re.compile(r"[A-Za-z][\w+.-]*+://[^/]*+(?P<path>[^?#]*+)")
# `/C:/src/a.js`, left by a `file:///C:/src/a.js` URL on Windows.
_SLASH_DRIVE = re.compile(r"/[A-Za-z]:/")


def clean_lines(text: str) -> list[str]:
    """The lines of pasted output without colour codes or trailing blanks.

    Shared by the evidence parsers so each sees the same lines.
    """
    return [line.rstrip() for line in _ANSI.sub("", text).splitlines()]


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


def _plausible_path(path: str) -> bool:
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
_JVM_LIBRARY_MODULES = ("java.", "jdk.")
_RUST_LIBRARY_CRATES = frozenset({"std", "core", "alloc", "test", "proc_macro", "panic_unwind", "backtrace"})
_C_LIBRARY_FUNCTIONS = ("__libc_", "__interceptor_", "__asan", "__sanitizer", "_start", "std::", "__gnu_cxx::")
_ELIXIR_LIBRARY_APPS = frozenset({
    "elixir", "stdlib", "kernel", "erts", "compiler", "ex_unit", "iex", "logger", "mix", "eex",
    "crypto", "ssl", "inets", "public_key",
})
_DART_LIBRARY_PACKAGES = frozenset({"flutter", "flutter_test"})


def _library_path(path: str) -> bool:
    """Whether a path lies in a dependency directory, a system install or a runtime's pseudo-file."""
    if path.startswith(_LIBRARY_PREFIXES) or _PYTHON_STDLIB.search(path):
        return True
    return any(segment in _LIBRARY_SEGMENTS for segment in path.split("/")[:-1])


def _library_by_language(raw: _Raw) -> bool:
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


def _is_library(raw: _Raw) -> bool:
    if raw.library is not None:
        return raw.library
    return bool(raw.path and _library_path(raw.path)) or _library_by_language(raw)


def _finish(raws: Iterable[_Raw]) -> list[Frame]:
    """Number a trace's frames innermost first, dropping frames that name neither a file nor a module."""
    frames: list[Frame] = []
    for raw in raws:
        if raw.path is None and raw.module is None:
            continue
        frames.append(Frame(
            raw.path, raw.line, raw.column, raw.function, raw.module, raw.language, len(frames), _is_library(raw)
        ))
    return frames


def _traces(*traces: list[Frame]) -> list[list[Frame]]:
    return [trace for trace in traces if trace]


# ---------------------------------------------------------------------------
# Python

# `Traceback (most recent call last):`, also inside an exception group as `  | Traceback ...`.
_PY_HEADER = re.compile(r"[ \t|+]*+Traceback \(most recent call last\):$")
# `  File "/srv/app/inventory/stock.py", line 31, in reserve`
_PY_FILE = re.compile(r'(?P<indent>[ \t|+]*+)File "(?P<path>[^"]++)", line (?P<line>[0-9]++)(?:, in (?P<function>.+))?$')
# `  [Previous line repeated 996 more times]`
_PY_REPEATED = re.compile(r"[ \t|]*+\[Previous line repeated [0-9]++ more times?\]$")
# The indentation of a traceback line, exception-group bars included: `  |     stock.reserve(3)`.
_PY_INDENT = re.compile(r"[ \t|+]*+")


def _read_python(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """A traceback: `File` lines, each followed by its more indented source and caret lines."""
    j = i + 1 if _PY_HEADER.match(lines[i]) else i
    raws: list[_Raw] = []
    indent = 0
    while j < len(lines):
        line = lines[j]
        if match := _PY_FILE.match(line):
            indent = len(match["indent"])
            raws.append(_Raw("python", normalise_path(match["path"]), number(match["line"]), None, match["function"]))
        elif not raws or not (_PY_REPEATED.match(line) or _PY_INDENT.match(line).end() > indent):
            break
        j += 1
    if not raws:
        return None
    # Python prints the outermost call first ("most recent call last").
    return _traces(_finish(reversed(raws))), j


# pytest's own traceback: `tests/test_stock.py:12: in test_reserve` (short style),
# `tests/test_stock.py:12: ` (long style) and `inventory/stock.py:31: KeyError` (the innermost entry).
_PYTEST_LOCATION = re.compile(
    r"(?P<path>(?:[A-Za-z]:)?[^\s:]++):(?P<line>[0-9]++):"
    r"(?:\s++(?:in (?P<function>\S++)|(?P<exception>[A-Za-z_][\w.]*+)))?$"
)
# A test section header `____ test_reserve ____`, a `=== ... ===` or `--- Captured stdout ---` banner,
# or the sentence that starts a chained exception.
_PYTEST_BOUNDARY = re.compile(
    r"_{3,}|={3,}|-{3,}|\s*+During handling of the above exception|\s*+The above exception was the direct cause"
)
# The first source line of a long-style entry: `    def reserve(self, sku, n):`.
_PYTEST_DEF = re.compile(r"[>\s]\s*+(?:async\s++)?def\s++(?P<name>\w++)")
# How far back the def line of the first entry is looked for.
_PYTEST_LOOKBACK = 60


def _pytest_location(line: str) -> re.Match[str] | None:
    match = _PYTEST_LOCATION.match(line)
    return match if match and match["path"].endswith((".py", ".pyi")) else None


def _def_before(lines: list[str], i: int) -> str | None:
    """The function a long-style entry shows, from its def line above the entry's location line."""
    name = None
    for k in range(i - 1, max(-1, i - 1 - _PYTEST_LOOKBACK), -1):
        if _PYTEST_BOUNDARY.match(lines[k]) or _pytest_location(lines[k]):
            break
        if match := _PYTEST_DEF.match(lines[k]):
            name = match["name"]
    return name


def _read_pytest(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """pytest's entries: a location line after each entry's source, separated by anything but a banner."""
    if not _pytest_location(lines[i]):
        return None
    raws: list[_Raw] = []
    entry_def = _def_before(lines, i)
    j = end = i
    while j < len(lines):
        line = lines[j]
        if match := _pytest_location(line):
            raws.append(_Raw(
                "python", normalise_path(match["path"]), number(match["line"]), None, match["function"] or entry_def
            ))
            entry_def, end = None, j + 1
            if match["exception"]:
                break
        elif _PYTEST_BOUNDARY.match(line) or is_frame_line(line):
            break
        elif entry_def is None and (definition := _PYTEST_DEF.match(line)):
            entry_def = definition["name"]
        j += 1
    return _traces(_finish(reversed(raws))), end


# ---------------------------------------------------------------------------
# JVM (Java, Kotlin, Scala, Groovy, Clojure)

# `\tat com.acme.orders.OrderService.place(OrderService.java:57)`, `\tat java.base/java.lang.Thread.run(Thread.java:833)`,
# with whatever a logger appends: `\tat org.x.Y.z(Y.java:9) ~[x-1.0.jar:1.0]`.
_JVM_AT = re.compile(r"\s*+at (?P<qualified>[^\s()]++)\((?P<source>[^()]*+)\)(?:\s.*)?$")
# `OrderService.java:57`, `Cart.kt`, `Native Method`, `Unknown Source`, `SourceFile:12` (obfuscated).
_JVM_SOURCE = re.compile(
    r"(?P<file>[\w$-]++\.(?:java|kt|kts|scala|groovy|clj|cljc|aj))(?::(?P<line>[0-9]++))?"
    r"|Native Method|Unknown Source(?::[0-9]++)?|SourceFile(?::[0-9]++)?"
)
# `Caused by: java.sql.SQLException: connection refused`, `\tSuppressed: java.io.IOException: close`
_JVM_CAUSE = re.compile(r"\s*+(?:Caused by|Suppressed): ")
# `\t... 12 more`, `\t... 5 common frames omitted`
_JVM_OMITTED = re.compile(r"\s*+\.\.\. [0-9]++ (?:more|common frames omitted)$")


def _jvm_frame(line: str) -> _Raw | None:
    match = _JVM_AT.match(line)
    if not match or not (source := _JVM_SOURCE.fullmatch(match["source"])):
        return None
    # A Java 9+ module or class loader prefix: `java.base/`, `app//`.
    loader, _, qualified = match["qualified"].rpartition("/")
    parts = qualified.split(".")
    package = ".".join(parts[:-2]) or None
    library = True if loader.startswith(_JVM_LIBRARY_MODULES) else None
    return _Raw("java", source["file"], number(source["line"]), None, qualified, package, library)


def _read_jvm(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """An exception and its causes; every `Caused by:` or `Suppressed:` starts a trace of its own."""
    if _jvm_frame(lines[i]) is None:
        return None
    segments: list[list[_Raw]] = [[]]
    j = i
    while j < len(lines):
        line = lines[j]
        if (raw := _jvm_frame(line)) is not None:
            segments[-1].append(raw)
        elif _JVM_CAUSE.match(line):
            segments.append([])
        elif not _JVM_OMITTED.match(line):
            break
        j += 1
    # The JVM prints the outermost exception first; its root cause, printed last, happened first.
    return _traces(*(_finish(segment) for segment in reversed(segments))), j


# ---------------------------------------------------------------------------
# C#

# `   at Acme.Cart.Add(Item item) in /src/Cart.cs:line 42`, `   at System.Linq.Enumerable.Sum(IEnumerable`1 source)`
_CSHARP_AT = re.compile(
    r"\s*+at (?P<function>[^\s(]++)\((?P<parameters>[^()]*+)\)(?: in (?P<path>.+):line (?P<line>[0-9]++))?$"
)
# `   --- End of inner exception stack trace ---` ends the inner (root cause) exception's frames.
_CSHARP_INNER_END = re.compile(r"\s*+--- End of inner exception stack trace ---$")
# `--- End of stack trace from previous location ---`: an async hop inside one trace.
_CSHARP_CONTINUED = re.compile(r"\s*+--- End of stack trace from previous location(?: where exception was thrown)? ---$")


def _csharp_frame(line: str) -> _Raw | None:
    if _jvm_frame(line) is not None or not (match := _CSHARP_AT.match(line)):
        return None
    function = match["function"]
    path = normalise_path(match["path"]) if match["path"] else None
    return _Raw("csharp", path, number(match["line"]), None, function, function.rpartition(".")[0] or None)


def _read_csharp(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """.NET frames; an inner exception's frames come first and form their own trace."""
    if _csharp_frame(lines[i]) is None:
        return None
    segments: list[list[_Raw]] = [[]]
    j = i
    while j < len(lines):
        line = lines[j]
        if (raw := _csharp_frame(line)) is not None:
            segments[-1].append(raw)
        elif _CSHARP_INNER_END.match(line):
            segments.append([])
        elif not _CSHARP_CONTINUED.match(line):
            break
        j += 1
    return _traces(*(_finish(segment) for segment in segments)), j


# ---------------------------------------------------------------------------
# Rust

# `thread 'main' panicked at src/cart.rs:42:5:` (Rust 1.73+), `thread 'main' panicked at 'msg', src/cart.rs:42:5`
_RUST_PANIC = re.compile(r"thread '[^']*+'(?: \([0-9]++\))? panicked at ")
# `stack backtrace:`
_RUST_BACKTRACE = re.compile(r"stack backtrace:$")
# `   3: shop::cart::Cart::add`, with RUST_BACKTRACE=full `   3:     0x55d5c0c0b0e1 - shop::cart::Cart::add::h0123456789abcdef`
_RUST_FRAME = re.compile(r"\s*+[0-9]++: ++(?:0x[0-9a-fA-F]++ - )?(?P<function>\S.*)$")
# `             at ./src/cart.rs:42:5`
_RUST_AT = re.compile(r"\s++at (?P<location>\S.*)$")
# The hash suffix of a full backtrace's symbol: `::h0123456789abcdef`.
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")


def _rust_module(function: str) -> str | None:
    """``shop::cart::Cart::add`` → ``shop::cart``: the leading lower-case segments before a type or the function."""
    path = function
    if path.startswith("<"):
        # `<shop::cart::Cart as core::fmt::Display>::fmt` is a method of shop::cart::Cart.
        path = path[1:].split(" as ", 1)[0].split(">", 1)[0]
    segments = [segment.split("<", 1)[0] for segment in path.split("::")]
    while segments and segments[-1].startswith("{{"):
        segments.pop()
    module = []
    for segment in segments[:-1]:
        if not segment or not (segment[0].islower() or segment[0] == "_"):
            break
        module.append(segment)
    return "::".join(module) or None


def _rust_raw(function: str) -> _Raw:
    function = _RUST_HASH.sub("", function.strip())
    return _Raw("rust", function=function, module=_rust_module(function))


def _set_location(raw: _Raw, location: str) -> None:
    if (parts := split_location(location)) and _plausible_path(parts[0]):
        raw.path, raw.line, raw.column = normalise_path(parts[0]), parts[1], parts[2]


def _read_rust_panic(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """The panic line names the panicking location; it is a one-frame trace of its own."""
    if not (match := _RUST_PANIC.match(lines[i])):
        return None
    rest = lines[i][match.end():]
    location = rest[:-1] if rest.endswith(":") else rest.rpartition(", ")[2]
    raw = _Raw("rust")
    _set_location(raw, location)
    return _traces(_finish([raw])), i + 1


def _read_rust_backtrace(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """`N: function` lines, each followed by `at path:line:col` (and inlined frames under it)."""
    if _RUST_BACKTRACE.match(lines[i]):
        j = i + 1
    elif _RUST_FRAME.match(lines[i]) and i + 1 < len(lines) and _RUST_AT.match(lines[i + 1]):
        j = i
    else:
        return None
    raws: list[_Raw] = []
    after_location = False
    while j < len(lines):
        line = lines[j]
        if match := _RUST_FRAME.match(line):
            raws.append(_rust_raw(match["function"]))
            after_location = False
        elif match := _RUST_AT.match(line):
            if raws and raws[-1].path is None:
                _set_location(raws[-1], match["location"])
            after_location = True
        elif after_location and line[:1].isspace():
            # RUST_BACKTRACE=full prints inlined frames unnumbered under the frame they were inlined into.
            raws.append(_rust_raw(line))
            after_location = False
        else:
            break
        j += 1
    return _traces(_finish(raws)), j


# ---------------------------------------------------------------------------
# JavaScript and TypeScript

# V8: `    at Ledger.post (/home/u/app/src/ledger.ts:12:11)`, `    at /home/u/app/src/x.js:3:9`, `    at async Promise.all (index 0)`
_JS_AT = re.compile(r"\s*+at (?P<rest>\S.*)$")
# Firefox and Safari: `post@http://localhost:8080/static/ledger.js:12:11`, `global code@file:///x.js:1:1`
_FIREFOX = re.compile(r"(?P<function>[^@\s]*+(?: [^@\s]++)*+)@(?P<location>\S++)$")
# V8's call-site decorations: `async `, `new `, and a method alias `Foo.bar [as baz]`.
_JS_ALIAS = re.compile(r" \[as [^\]]*+\]$")


def _js_frame(rest: str) -> _Raw:
    rest = rest.removeprefix("async ")
    function = None
    location = rest
    if rest.endswith(")") and (open_paren := rest.find(" (")) > 0:
        function = _JS_ALIAS.sub("", rest[:open_paren].removeprefix("new "))
        location = rest[open_paren + 2:-1]
    raw = _Raw("javascript", function=function)
    _set_location(raw, location)
    return raw


def _js_line(line: str) -> _Raw | None:
    """A V8 frame line, with or without a location; None when the line is a JVM or .NET frame."""
    if not (match := _JS_AT.match(line)) or _jvm_frame(line) is not None or _csharp_frame(line) is not None:
        return None
    return _js_frame(match["rest"])


def _read_javascript(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """Consecutive V8 `at` lines, innermost first."""
    raws: list[_Raw] = []
    j = i
    while j < len(lines) and (raw := _js_line(lines[j])) is not None:
        raws.append(raw)
        j += 1
    frames = _finish(raws)
    return ([frames], j) if frames else None


def _firefox_frame(line: str) -> _Raw | None:
    if not (match := _FIREFOX.match(line)):
        return None
    location = match["location"]
    if "://" not in location and not location.startswith("/"):
        return None
    raw = _Raw("javascript", function=match["function"] or None)
    _set_location(raw, location)
    return raw if raw.path else None


def _read_firefox(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    raws: list[_Raw] = []
    j = i
    while j < len(lines) and (raw := _firefox_frame(lines[j])) is not None:
        raws.append(raw)
        j += 1
    return (_traces(_finish(raws)), j) if raws else None


# ---------------------------------------------------------------------------
# Go

# `goroutine 1 [running]:`, `goroutine 7 gp=0xc000007c00 m=nil [chan receive]:`
_GO_HEADER = re.compile(r"goroutine [0-9]++[^\[]*+\[[^\]]*+\]:$")
# `main.(*Server).Start(0xc000010000)`, `panic({0x4a0d40?, 0x55e410?})`, `created by main.main in goroutine 1`
_GO_FUNCTION = re.compile(r"(?:created by )?(?P<function>[^\s(]\S*?)(?:\([^()]*+\))?(?: in goroutine [0-9]++)?$")
# `\t/home/u/shop/server.go:42 +0x1d`
_GO_FILE = re.compile(r"\t(?P<path>\S.*):(?P<line>[0-9]++)(?: \+0x[0-9a-fA-F]++)?(?: fp=\S++ sp=\S++ pc=\S++)?$")
# `...additional frames elided...`
_GO_ELIDED = re.compile(r"\.\.\.additional frames elided\.\.\.$")


def _go_package(function: str) -> str | None:
    """``github.com/acme/shop/cart.(*Cart).Add`` → ``github.com/acme/shop/cart``: up to the first dot after the last slash."""
    slash = function.rfind("/", 0, function.find("(") if "(" in function else len(function))
    dot = function.find(".", slash + 1)
    return function[:dot] if dot > 0 else None


def _read_go(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """One goroutine: pairs of a function line and a tab-indented file line."""
    j = i + 1 if _GO_HEADER.match(lines[i]) else i
    raws: list[_Raw] = []
    while j + 1 < len(lines):
        function, location = _GO_FUNCTION.match(lines[j]), _GO_FILE.match(lines[j + 1])
        if function and location:
            name = function["function"]
            raws.append(_Raw("go", normalise_path(location["path"]), number(location["line"]), None, name, _go_package(name)))
            j += 2
        elif raws and _GO_ELIDED.match(lines[j]):
            j += 1
        else:
            break
    if not raws:
        return None
    return _traces(_finish(raws)), j


# ---------------------------------------------------------------------------
# Numbered frames: PHP, Dart, gdb and AddressSanitizer all start a frame with `#N`.

# `#0 /var/www/src/Cart.php(42): Acme\Cart->add()`, `#1  0x... in main () at main.c:7`, `#0      Cart.add (package:shop/cart.dart:42:5)`
_NUMBERED = re.compile(r"\s*+#(?P<number>[0-9]++)\s++(?P<rest>\S.*)$")
# `#0 /var/www/src/Checkout.php(17): Acme\Cart->add('sku-1')`, `#1 [internal function]: Acme\Cart->{closure}()`, `#2 {main}`
_PHP_FRAME = re.compile(
    r"#[0-9]++ (?:(?P<main>\{main\})|\[internal function\]: (?P<internal>.+)"
    r"|(?P<path>[^()\s][^()]*+)\((?P<line>[0-9]++)\): (?P<call>.+))$"
)
# `PHP Fatal error:  Uncaught TypeError: ... in /var/www/src/Cart.php:42`, `Parse error: ... in /x.php on line 3`
_PHP_ERROR = re.compile(
    r"(?:PHP )?(?:Fatal error|Parse error|Warning|Notice|Deprecated|Recoverable fatal error|Catchable fatal error): "
)
# `  thrown in /var/www/src/Cart.php on line 42`
_PHP_THROWN = re.compile(r"\s*+thrown in (?P<path>\S++) on line (?P<line>[0-9]++)$")
_PHP_STACK_HEADER = "Stack trace:"
_PHP_ON_LINE = " on line "


def php_error_location(line: str) -> tuple[str, int] | None:
    """The location at the end of a PHP error message: ``... in /x/Cart.php:42`` or ``... in /x/Cart.php on line 42``."""
    if not _PHP_ERROR.match(line) or (start := line.rfind(" in ")) < 0:
        return None
    tail = line[start + 4:]
    if _PHP_ON_LINE in tail:
        path, _, line_text = tail.rpartition(_PHP_ON_LINE)
        found = (path, number(line_text))
    else:
        parts = split_location(tail)
        found = (parts[0], parts[1]) if parts and parts[2] is None else (tail, None)
    path, line_number = found
    if line_number is None or not path or " " in path:
        return None
    return normalise_path(path), line_number


def _php_callee(call: str | None) -> tuple[str | None, str | None]:
    """``Acme\\Cart->add('x')`` → (``Acme\\Cart->add``, ``Acme\\Cart``)."""
    if not call:
        return None, None
    function = call.split("(", 1)[0] if not call.startswith("(") else call
    for separator in ("->", "::"):
        if separator in function:
            return function, function.partition(separator)[0] or None
    return function, None


def _read_php(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """An error location and its `#N path(line): call` frames.

    A PHP frame line names the call made *at* that location, so the function
    running there is the callee of the next line; the error location runs the
    callee of frame #0. Frames are shifted accordingly.
    """
    error = php_error_location(lines[i])
    j = i + 1 if error else i
    if error and j < len(lines) and lines[j].strip() == _PHP_STACK_HEADER:
        j += 1
    entries: list[tuple[str | None, int | None, str | None]] = []
    while j < len(lines) and (match := _PHP_FRAME.match(lines[j].strip())):
        path = normalise_path(match["path"]) if match["path"] else None
        entries.append((path, number(match["line"]), match["call"] or match["internal"]))
        j += 1
    if j < len(lines) and (thrown := _PHP_THROWN.match(lines[j])):
        error = error or (normalise_path(thrown["path"]), number(thrown["line"]))
        j += 1
    if error is None and not entries:
        return None
    calls = [call for _, _, call in entries] + [None]
    function, module = _php_callee(calls[0])
    raws = [_Raw("php", error[0] if error else None, error[1] if error else None, None, function, module)]
    for index, (path, line_number, _) in enumerate(entries):
        function, module = _php_callee(calls[index + 1])
        raws.append(_Raw("php", path, line_number, None, function, module))
    return _traces(_finish(raws)), j


# Dart's terse format in `dart test`: `package:shop/cart.dart 42:5      Cart.add`, `dart:async   _CustomZone.run`
_DART_TERSE = re.compile(r"(?P<path>\S++)(?: (?P<line>[0-9]++)(?::(?P<column>[0-9]++))?)?\s++(?P<function>\S.*)$")
# `<asynchronous suspension>` between Dart frames.
_DART_SUSPENSION = "<asynchronous suspension>"


def _dart_raw(location: str, line: int | None, column: int | None, function: str | None) -> _Raw | None:
    """A Dart frame; ``package:shop/cart.dart`` is the file lib/cart.dart of package shop."""
    if not (location.endswith(".dart") or location.startswith("dart:")):
        return None
    module = None
    path = normalise_path(location)
    if location.startswith("package:"):
        module, _, inner = location[len("package:"):].partition("/")
        path = f"{module}/lib/{inner}"
    library = True if location.startswith("dart:") else None
    return _Raw("dart", path, line, column, function, module or None, library)


def _dart_numbered(line: str) -> _Raw | None:
    """`#1      Cart.add (package:shop/cart.dart:42:5)`"""
    if not (match := _NUMBERED.match(line)) or not (rest := match["rest"]).endswith(")"):
        return None
    open_paren = rest.rfind(" (")
    if open_paren < 0 or not (parts := split_location(rest[open_paren + 2:-1])):
        return None
    return _dart_raw(parts[0], parts[1], parts[2], rest[:open_paren].strip())


def _dart_terse(line: str) -> _Raw | None:
    if not (match := _DART_TERSE.match(line)):
        return None
    return _dart_raw(match["path"], number(match["line"]), number(match["column"]), match["function"])


def _read_dart(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    for parse in (_dart_numbered, _dart_terse):
        if parse(lines[i]) is None:
            continue
        raws: list[_Raw] = []
        j = i
        while j < len(lines):
            if (raw := parse(lines[j])) is not None:
                raws.append(raw)
            elif lines[j].strip() != _DART_SUSPENSION:
                break
            j += 1
        return _traces(_finish(raws)), j
    return None


# gdb and AddressSanitizer after `#N`: `0x000055555555513d in Ledger::post (this=0x...) at /home/u/ledger.cpp:42`,
# `0x4f5e2b in post /home/u/ledger.c:42:13`, or gdb's frame #0 without an address: `main () at main.c:7`.
_C_ADDRESS = re.compile(r"0x[0-9a-fA-F]++ in ")
# `    at /home/u/ledger.cpp:42` when gdb wraps a long frame line.
_GDB_CONTINUATION = re.compile(r"\s++at (?P<location>\S++)$")


def _c_frame(line: str) -> tuple[int, _Raw] | None:
    """A gdb or sanitizer frame and its number; a frame without source has no path."""
    if not (match := _NUMBERED.match(line)):
        return None
    rest = match["rest"]
    if address := _C_ADDRESS.match(rest):
        body = rest[address.end():]
    elif " at " in rest and " (" in rest:
        body = rest
    else:
        return None
    raw = _Raw("c")
    if " at " in body:
        head, _, location = body.rpartition(" at ")
        raw.function = head.split(" (", 1)[0]
    else:
        head, _, location = body.rpartition(" ")
        raw.function = (head or body).split("(", 1)[0].strip() or None
    _set_location(raw, location)
    return number(match["number"]) or 0, raw


def _read_c(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """gdb's `bt` or a sanitizer report; frame numbers that restart at 0 start a new trace."""
    if _c_frame(lines[i]) is None:
        return None
    traces: list[list[_Raw]] = [[]]
    previous = -1
    j = i
    while j < len(lines):
        if found := _c_frame(lines[j]):
            frame_number, raw = found
            if frame_number <= previous:
                traces.append([])
            traces[-1].append(raw)
            previous = frame_number
        elif (wrapped := _GDB_CONTINUATION.match(lines[j])) and traces[-1] and traces[-1][-1].path is None:
            _set_location(traces[-1][-1], wrapped["location"])
        else:
            break
        j += 1
    return _traces(*(_finish(trace) for trace in traces)), j


# lldb: `  * frame #0: 0x0000000100003f5c Cart`Cart.add(_:) at Cart.swift:42:5`
_LLDB_FRAME = re.compile(r"\s*+(?:\* )?frame #[0-9]++: 0x[0-9a-fA-F]++ (?P<image>[^`\s]++)`(?P<rest>.*)$")
# Languages lldb frames are written in, by file extension (lldb serves several).
_LLDB_LANGUAGES = {"swift": "swift", "rs": "rust", "m": "c", "mm": "c", "c": "c", "cc": "c", "cpp": "c", "h": "c"}


def _lldb_frame(line: str) -> _Raw | None:
    if not (match := _LLDB_FRAME.match(line)):
        return None
    head, at, location = match["rest"].rpartition(" at ")
    function = (head if at else match["rest"]).split(" + ", 1)[0] or None
    raw = _Raw("c", function=function)
    if at:
        _set_location(raw, location)
    if raw.path:
        raw.language = _LLDB_LANGUAGES.get(raw.path.rpartition(".")[2], "c")
    return raw


def _read_lldb(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    raws: list[_Raw] = []
    j = i
    while j < len(lines) and (raw := _lldb_frame(lines[j])) is not None:
        raws.append(raw)
        j += 1
    return (_traces(_finish(raws)), j) if raws else None


# ---------------------------------------------------------------------------
# Ruby

# `/app/lib/cart.rb:42:in 'add': undefined method...`, `\tfrom /app/lib/checkout.rb:10:in 'Checkout#run'`;
# before Ruby 3.4 "in `add'", Ruby 2.5-2.7 numbered its reversed lines (`\t2: from ...`), RSpec prefixes `# `.
_RUBY_FRAME = re.compile(
    r"\s*+(?:# )?(?:(?P<number>[0-9]++): )?(?:from )?"
    r"(?P<path>(?:[A-Za-z]:)?[^:\s][^:]*+):(?P<line>[0-9]++):in [`'](?P<function>[^`']*+)'"
)
# `\t ... 5 levels...`
_RUBY_LEVELS = re.compile(r"\s*+\.\.\. [0-9]++ levels\.\.\.$")
# Block labels around the method: `block (2 levels) in Cart#add`, `rescue in add`.
_RUBY_BLOCK = re.compile(r"(?:(?:block|rescue|ensure)(?: \([0-9]++ levels\))? in )++")


def _ruby_module(label: str) -> str | None:
    """``Cart#add`` or ``Cart.create`` (Ruby 3.4 labels) → ``Cart``."""
    method = _RUBY_BLOCK.sub("", label)
    if "#" in method:
        return method.rpartition("#")[0] or None
    if "." in method and method[:1].isupper():
        return method.rpartition(".")[0]
    return None


def _read_ruby(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    raws: list[_Raw] = []
    numbered = False
    j = i
    while j < len(lines):
        if match := _RUBY_FRAME.match(lines[j]):
            label = match["function"]
            raws.append(_Raw("ruby", normalise_path(match["path"]), number(match["line"]), None, label, _ruby_module(label)))
            numbered = numbered or match["number"] is not None
        elif not (raws and _RUBY_LEVELS.match(lines[j])):
            break
        j += 1
    if not raws:
        return None
    if numbered:
        # Ruby 2.5-2.7 printed "Traceback (most recent call last):" and the outermost frame first.
        raws.reverse()
    return _traces(_finish(raws)), j


# ---------------------------------------------------------------------------
# Elixir and Erlang

# `    (my_app 0.1.0) lib/my_app/cart.ex:42: MyApp.Cart.add/2`, `    test/cart_test.exs:12: (test)`,
# `    (my_app 0.1.0) MyApp.Cart.add/2`, `    :erlang.+(nil, 1)`
_ELIXIR_FRAME = re.compile(
    r"\s++(?:\((?P<app>\w++)(?: [^\s)]++)?\) )?(?:(?P<path>[^\s:()]++):(?P<line>[0-9]++): )?(?P<function>\S.*)$"
)
_ELIXIR_EXTENSIONS = (".ex", ".exs", ".erl", ".hrl")
# A function without a file: `MyApp.Cart.add/2`, `MyApp.Cart.add(nil, 1)`, `:erlang.+(nil, 1)`.
_ELIXIR_MFA = re.compile(r":?[\w.]+\.(?:\"[^\"]*+\"|[^\s(/]++)(?:/[0-9]++|\(.*\))$")


def _elixir_module(function: str) -> str | None:
    """``MyApp.Cart.add/2`` → ``MyApp.Cart``; ``anonymous fn/0 in MyApp.Cart.add/2`` → ``MyApp.Cart``."""
    mfa = function.rpartition(" in ")[2]
    if '."' in mfa:
        return mfa.partition('."')[0] or None
    name = mfa.split("(", 1)[0].split("/", 1)[0]
    module = name.rpartition(".")[0]
    return module or None


def _elixir_frame(line: str) -> _Raw | None:
    if not (match := _ELIXIR_FRAME.match(line)):
        return None
    path, function, app = match["path"], match["function"], match["app"]
    if path is None and not ((app or function.startswith(":")) and _ELIXIR_MFA.match(function)):
        return None
    if path is not None and not path.endswith(_ELIXIR_EXTENSIONS):
        return None
    library = True if app in _ELIXIR_LIBRARY_APPS else None
    return _Raw("elixir", path, number(match["line"]), None, function, _elixir_module(function), library)


def _read_elixir(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    raws: list[_Raw] = []
    j = i
    while j < len(lines) and (raw := _elixir_frame(lines[j])) is not None:
        raws.append(raw)
        j += 1
    return (_traces(_finish(raws)), j) if raws else None


# ---------------------------------------------------------------------------
# Swift

# `Cart/Cart.swift:42: Fatal error: Unexpectedly found nil while unwrapping an Optional value`
_SWIFT_FATAL = re.compile(r"(?P<path>[^\s:]++):(?P<line>[0-9]++): (?:Fatal error|Precondition failed|Assertion failed)\b")
# `Fatal error: Index out of range: file Cart/Cart.swift, line 42` (Swift before 5.3)
_SWIFT_FATAL_OLD = re.compile(r"(?:Fatal error|Precondition failed|Assertion failed): ")
# A crash report frame: `3   Cart                          0x000000010000355d Cart.add(_:) + 40 (Cart.swift:42)`
_SWIFT_CRASH_FRAME = re.compile(r"(?P<number>[0-9]++)\s++(?P<image>\S++)\s++0x[0-9a-fA-F]++ (?P<rest>\S.*)$")
# Images that belong to the system: `libswiftCore.dylib`, `libsystem_kernel.dylib`, `dyld`.
_SWIFT_SYSTEM_IMAGES = ("libswift", "libsystem_", "libdyld", "libobjc", "dyld", "CoreFoundation", "Foundation", "UIKitCore")


def swift_fatal_location(line: str) -> tuple[str, int] | None:
    """Where a Swift runtime failure happened, in either the current or the pre-5.3 message form."""
    match = _SWIFT_FATAL.match(line)
    if match and match["path"].endswith(".swift") and (line_number := number(match["line"])) is not None:
        return normalise_path(match["path"]), line_number
    if _SWIFT_FATAL_OLD.match(line) and (start := line.rfind(": file ")) >= 0:
        path, comma, line_text = line[start + len(": file "):].rpartition(", line ")
        if comma and path.endswith(".swift") and (line_number := number(line_text)) is not None:
            return normalise_path(path), line_number
    return None


def _read_swift_fatal(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    if not (found := swift_fatal_location(lines[i])):
        return None
    path, line_number = found
    library = True if path.startswith("Swift/") else None
    return _traces(_finish([_Raw("swift", path, line_number, library=library)])), i + 1


def _swift_crash_frame(line: str) -> _Raw | None:
    if not (match := _SWIFT_CRASH_FRAME.match(line)):
        return None
    rest = match["rest"]
    raw = _Raw("swift", library=True if match["image"].startswith(_SWIFT_SYSTEM_IMAGES) else None)
    head = rest
    if rest.endswith(")") and (open_paren := rest.rfind(" (")) >= 0:
        _set_location(raw, rest[open_paren + 2:-1])
        head = rest[:open_paren]
    raw.function = head.rpartition(" + ")[0] or head
    if raw.path and not raw.path.endswith(".swift"):
        raw.language = "c"
    return raw


def _read_swift_crash(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    raws: list[_Raw] = []
    j = i
    while j < len(lines) and (raw := _swift_crash_frame(lines[j])) is not None:
        raws.append(raw)
        j += 1
    return (_traces(_finish(raws)), j) if raws else None


# ---------------------------------------------------------------------------
# Putting the readers together.

# Tried in this order on each line; the first that recognises a trace start reads the trace.
# JVM and .NET come before V8 because all three write `at ...`; PHP and Dart before gdb for `#N`.
_READERS: tuple[_Reader, ...] = (
    _read_python, _read_pytest, _read_jvm, _read_csharp, _read_rust_panic, _read_rust_backtrace,
    _read_javascript, _read_firefox, _read_go, _read_php, _read_dart, _read_c, _read_lldb,
    _read_ruby, _read_elixir, _read_swift_fatal, _read_swift_crash,
)


def parse_frames(text: str) -> list[Frame]:
    """Every stack frame in ``text``: traces in order, each trace's frames innermost first.

    Never raises; text without traces gives an empty list.
    """
    lines = clean_lines(text)
    frames: list[Frame] = []
    i = 0
    while i < len(lines):
        for reader in _READERS:
            if found := reader(lines, i):
                traces, after = found
                for trace in traces:
                    frames.extend(trace)
                i = max(after, i + 1)
                break
        else:
            i += 1
    return frames


def _go_frame_line(line: str) -> bool:
    return bool(_GO_FILE.match(line) or _GO_HEADER.match(line))


def _js_frame_line(line: str) -> bool:
    raw = _js_line(line)
    return raw is not None and raw.path is not None


def _php_frame_line(line: str) -> bool:
    match = _PHP_FRAME.match(line.strip())
    return bool(match and match["path"])


def _pytest_frame_line(line: str) -> bool:
    match = _pytest_location(line)
    return bool(match and match["function"])


# One-line tests for "this line is a frame of a trace", used to keep frames out of locations.
_FRAME_LINE_CHECKS: tuple[Callable[[str], object], ...] = (
    _PY_FILE.match, _pytest_frame_line, _jvm_frame, _csharp_frame, _js_frame_line, _firefox_frame,
    _go_frame_line, _RUST_FRAME.match, _php_frame_line, _dart_numbered, _c_frame, _lldb_frame,
    _RUBY_FRAME.match, _elixir_frame, _swift_crash_frame,
)


def is_frame_line(line: str) -> bool:
    """Whether one line is a frame of a stack trace.

    Compiler and test-runner locations leave such lines to ``parse_frames``;
    one-line error reports (a Rust panic, a PHP fatal error) are not frames
    here, because they are locations as well.
    """
    line = _ANSI.sub("", line).rstrip()
    return any(check(line) for check in _FRAME_LINE_CHECKS)
