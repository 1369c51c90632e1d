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
from collections.abc import Callable

from rag_lsp.retrieval.evidence.frames import (
    ANSI,
    ELIXIR_LIBRARY_APPS,
    JVM_LIBRARY_MODULES,
    Frame,
    RawFrame,
    Reader,
    clean_lines,
    finish,
    normalise_path,
    number,
    traces_of,
)
from rag_lsp.retrieval.evidence.native_traces import (
    GO_FILE,
    GO_HEADER,
    PHP_FRAME,
    RUST_FRAME,
    c_frame,
    dart_numbered,
    lldb_frame,
    read_c,
    read_dart,
    read_go,
    read_lldb,
    read_php,
    read_rust_backtrace,
    read_rust_panic,
    read_swift_crash,
    read_swift_fatal,
    set_location,
    swift_crash_frame,
)

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


def _indent_of(line: str) -> int:
    """How far a traceback line is indented (the pattern matches every line, possibly empty)."""
    match = _PY_INDENT.match(line)
    return match.end() if match else 0


def _read_python(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """A traceback: `File` lines, each followed by its more indented source and caret lines."""
    j = i + 1 if _PY_HEADER.match(lines[i]) else i
    raws: list[RawFrame] = []
    indent = 0
    while j < len(lines):
        line = lines[j]
        if match := _PY_FILE.match(line):
            indent = len(match["indent"])
            raws.append(RawFrame("python", normalise_path(match["path"]), number(match["line"]), None, match["function"]))
        elif not raws or not (_PY_REPEATED.match(line) or _indent_of(line) > indent):
            break
        j += 1
    if not raws:
        return None
    # Python prints the outermost call first ("most recent call last").
    return traces_of(finish(reversed(raws))), j


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
    raws: list[RawFrame] = []
    entry_def = _def_before(lines, i)
    j = end = i
    while j < len(lines):
        line = lines[j]
        if match := _pytest_location(line):
            raws.append(RawFrame(
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
    return traces_of(finish(reversed(raws))), end


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


def _jvm_frame(line: str) -> RawFrame | None:
    match = _JVM_AT.match(line)
    if not match or not (source := _JVM_SOURCE.fullmatch(match["source"])):
        return None
    # A Java 9+ module or class loader prefix: `java.base/`, `app//`.
    loader, _, qualified = match["qualified"].rpartition("/")
    parts = qualified.split(".")
    package = ".".join(parts[:-2]) or None
    library = True if loader.startswith(JVM_LIBRARY_MODULES) else None
    return RawFrame("java", source["file"], number(source["line"]), None, qualified, package, library)


def _read_jvm(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """An exception and its causes; every `Caused by:` or `Suppressed:` starts a trace of its own."""
    if _jvm_frame(lines[i]) is None:
        return None
    segments: list[list[RawFrame]] = [[]]
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
    return traces_of(*(finish(segment) for segment in reversed(segments))), j


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


def _csharp_frame(line: str) -> RawFrame | None:
    if _jvm_frame(line) is not None or not (match := _CSHARP_AT.match(line)):
        return None
    function = match["function"]
    path = normalise_path(match["path"]) if match["path"] else None
    return RawFrame("csharp", path, number(match["line"]), None, function, function.rpartition(".")[0] or None)


def _read_csharp(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """.NET frames; an inner exception's frames come first and form their own trace."""
    if _csharp_frame(lines[i]) is None:
        return None
    segments: list[list[RawFrame]] = [[]]
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
    return traces_of(*(finish(segment) for segment in segments)), j


# ---------------------------------------------------------------------------
# JavaScript and TypeScript

# V8: `    at Ledger.post (/home/u/app/src/ledger.ts:12:11)`, `    at /home/u/app/src/x.js:3:9`, `    at async Promise.all (index 0)`
_JS_AT = re.compile(r"\s*+at (?P<rest>\S.*)$")
# Firefox and Safari: `post@http://localhost:8080/static/ledger.js:12:11`, `global code@file:///x.js:1:1`
_FIREFOX = re.compile(r"(?P<function>[^@\s]*+(?: [^@\s]++)*+)@(?P<location>\S++)$")
# V8's call-site decorations: `async `, `new `, and a method alias `Foo.bar [as baz]`.
_JS_ALIAS = re.compile(r" \[as [^\]]*+\]$")


def _js_frame(rest: str) -> RawFrame:
    rest = rest.removeprefix("async ")
    function = None
    location = rest
    if rest.endswith(")") and (open_paren := rest.find(" (")) > 0:
        function = _JS_ALIAS.sub("", rest[:open_paren].removeprefix("new "))
        location = rest[open_paren + 2:-1]
    raw = RawFrame("javascript", function=function)
    set_location(raw, location)
    return raw


def _js_line(line: str) -> RawFrame | None:
    """A V8 frame line, with or without a location; None when the line is a JVM or .NET frame."""
    if not (match := _JS_AT.match(line)) or _jvm_frame(line) is not None or _csharp_frame(line) is not None:
        return None
    return _js_frame(match["rest"])


def _read_javascript(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """Consecutive V8 `at` lines, innermost first."""
    raws: list[RawFrame] = []
    j = i
    while j < len(lines) and (raw := _js_line(lines[j])) is not None:
        raws.append(raw)
        j += 1
    frames = finish(raws)
    return ([frames], j) if frames else None


def _firefox_frame(line: str) -> RawFrame | None:
    if not (match := _FIREFOX.match(line)):
        return None
    location = match["location"]
    if "://" not in location and not location.startswith("/"):
        return None
    raw = RawFrame("javascript", function=match["function"] or None)
    set_location(raw, location)
    return raw if raw.path else None


def _read_firefox(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    raws: list[RawFrame] = []
    j = i
    while j < len(lines) and (raw := _firefox_frame(lines[j])) is not None:
        raws.append(raw)
        j += 1
    return (traces_of(finish(raws)), j) if raws else None


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
    raws: list[RawFrame] = []
    numbered = False
    j = i
    while j < len(lines):
        if match := _RUBY_FRAME.match(lines[j]):
            label = match["function"]
            raws.append(RawFrame("ruby", normalise_path(match["path"]), number(match["line"]), None, label, _ruby_module(label)))
            numbered = numbered or match["number"] is not None
        elif not (raws and _RUBY_LEVELS.match(lines[j])):
            break
        j += 1
    if not raws:
        return None
    if numbered:
        # Ruby 2.5-2.7 printed "Traceback (most recent call last):" and the outermost frame first.
        raws.reverse()
    return traces_of(finish(raws)), j


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


def _elixir_frame(line: str) -> RawFrame | None:
    if not (match := _ELIXIR_FRAME.match(line)):
        return None
    path, function, app = match["path"], match["function"], match["app"]
    if path is None and not ((app or function.startswith(":")) and _ELIXIR_MFA.match(function)):
        return None
    if path is not None and not path.endswith(_ELIXIR_EXTENSIONS):
        return None
    library = True if app in ELIXIR_LIBRARY_APPS else None
    return RawFrame("elixir", path, number(match["line"]), None, function, _elixir_module(function), library)


def _read_elixir(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    raws: list[RawFrame] = []
    j = i
    while j < len(lines) and (raw := _elixir_frame(lines[j])) is not None:
        raws.append(raw)
        j += 1
    return (traces_of(finish(raws)), j) if raws else None


# ---------------------------------------------------------------------------
# Putting the readers together.

# Tried in this order on each line; the first that recognises a trace start reads the trace.
# JVM and .NET come before V8 because all three write `at ...`; PHP and Dart before gdb for `#N`.
_READERS: tuple[Reader, ...] = (
    _read_python, _read_pytest, _read_jvm, _read_csharp, read_rust_panic, read_rust_backtrace,
    _read_javascript, _read_firefox, read_go, read_php, read_dart, read_c, read_lldb,
    _read_ruby, _read_elixir, read_swift_fatal, read_swift_crash,
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
    return bool(GO_FILE.match(line) or GO_HEADER.match(line))


def _js_frame_line(line: str) -> bool:
    raw = _js_line(line)
    return raw is not None and raw.path is not None


def _php_frame_line(line: str) -> bool:
    match = PHP_FRAME.match(line.strip())
    return bool(match and match["path"])


def _pytest_frame_line(line: str) -> bool:
    match = _pytest_location(line)
    return bool(match and match["function"])


# One-line tests for "this line is a frame of a trace", used to keep frames out of locations.
_FRAME_LINE_CHECKS: tuple[Callable[[str], object], ...] = (
    _PY_FILE.match, _pytest_frame_line, _jvm_frame, _csharp_frame, _js_frame_line, _firefox_frame,
    _go_frame_line, RUST_FRAME.match, _php_frame_line, dart_numbered, c_frame, lldb_frame,
    _RUBY_FRAME.match, _elixir_frame, swift_crash_frame,
)


def is_frame_line(line: str) -> bool:
    """Whether one line is a frame of a stack trace.

    Compiler and test-runner locations leave such lines to ``parse_frames``;
    one-line error reports (a Rust panic, a PHP fatal error) are not frames
    here, because they are locations as well.
    """
    line = ANSI.sub("", line).rstrip()
    return any(check(line) for check in _FRAME_LINE_CHECKS)
