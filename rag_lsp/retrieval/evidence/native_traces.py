"""Stack traces of compiled and natively run code: Rust, Go, numbered frames (PHP, Dart, gdb,
AddressSanitizer, lldb) and Swift.

The readers follow the contract of ``traces.py``: each recognises the first
line of one of its traces and consumes the lines that belong to it, with
anchored patterns that cannot backtrack into each other.
"""

from __future__ import annotations

import re

from rag_lsp.retrieval.evidence.frames import (
    Frame,
    RawFrame,
    finish,
    normalise_path,
    number,
    plausible_path,
    split_location,
    traces_of,
)

# ---------------------------------------------------------------------------
# Rust

# `thread 'main' panicked at src/cart.rs:42:5:` (Rust 1.73+), `thread 'main' panicked at 'msg', src/cart.rs:42:5`
_RUST_PANIC = re.compile(r"thread '[^']*+'(?: \([0-9]++\))? panicked at ")
# `stack backtrace:`
_RUST_BACKTRACE = re.compile(r"stack backtrace:$")
# `   3: shop::cart::Cart::add`, with RUST_BACKTRACE=full `   3:     0x55d5c0c0b0e1 - shop::cart::Cart::add::h0123456789abcdef`
RUST_FRAME = re.compile(r"\s*+[0-9]++: ++(?:0x[0-9a-fA-F]++ - )?(?P<function>\S.*)$")
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


def _rust_raw(function: str) -> RawFrame:
    function = _RUST_HASH.sub("", function.strip())
    return RawFrame("rust", function=function, module=_rust_module(function))


def set_location(raw: RawFrame, location: str) -> None:
    if (parts := split_location(location)) and plausible_path(parts[0]):
        raw.path, raw.line, raw.column = normalise_path(parts[0]), parts[1], parts[2]


def read_rust_panic(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """The panic line names the panicking location; it is a one-frame trace of its own."""
    if not (match := _RUST_PANIC.match(lines[i])):
        return None
    rest = lines[i][match.end():]
    location = rest[:-1] if rest.endswith(":") else rest.rpartition(", ")[2]
    raw = RawFrame("rust")
    set_location(raw, location)
    return traces_of(finish([raw])), i + 1


def read_rust_backtrace(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """`N: function` lines, each followed by `at path:line:col` (and inlined frames under it)."""
    if _RUST_BACKTRACE.match(lines[i]):
        j = i + 1
    elif RUST_FRAME.match(lines[i]) and i + 1 < len(lines) and _RUST_AT.match(lines[i + 1]):
        j = i
    else:
        return None
    raws: list[RawFrame] = []
    after_location = False
    while j < len(lines):
        line = lines[j]
        if match := RUST_FRAME.match(line):
            raws.append(_rust_raw(match["function"]))
            after_location = False
        elif match := _RUST_AT.match(line):
            if raws and raws[-1].path is None:
                set_location(raws[-1], match["location"])
            after_location = True
        elif after_location and line[:1].isspace():
            # RUST_BACKTRACE=full prints inlined frames unnumbered under the frame they were inlined into.
            raws.append(_rust_raw(line))
            after_location = False
        else:
            break
        j += 1
    return traces_of(finish(raws)), j


# ---------------------------------------------------------------------------
# Go

# `goroutine 1 [running]:`, `goroutine 7 gp=0xc000007c00 m=nil [chan receive]:`
GO_HEADER = re.compile(r"goroutine [0-9]++[^\[]*+\[[^\]]*+\]:$")
# `main.(*Server).Start(0xc000010000)`, `panic({0x4a0d40?, 0x55e410?})`, `created by main.main in goroutine 1`
_GO_FUNCTION = re.compile(r"(?:created by )?(?P<function>[^\s(]\S*?)(?:\([^()]*+\))?(?: in goroutine [0-9]++)?$")
# `\t/home/u/shop/server.go:42 +0x1d`
GO_FILE = re.compile(r"\t(?P<path>\S.*):(?P<line>[0-9]++)(?: \+0x[0-9a-fA-F]++)?(?: fp=\S++ sp=\S++ pc=\S++)?$")
# `...additional frames elided...`
_GO_ELIDED = re.compile(r"\.\.\.additional frames elided\.\.\.$")


def _go_package(function: str) -> str | None:
    """``github.com/acme/shop/cart.(*Cart).Add`` → ``github.com/acme/shop/cart``: up to the first dot after the last slash."""
    slash = function.rfind("/", 0, function.find("(") if "(" in function else len(function))
    dot = function.find(".", slash + 1)
    return function[:dot] if dot > 0 else None


def read_go(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """One goroutine: pairs of a function line and a tab-indented file line."""
    j = i + 1 if GO_HEADER.match(lines[i]) else i
    raws: list[RawFrame] = []
    while j + 1 < len(lines):
        function, location = _GO_FUNCTION.match(lines[j]), GO_FILE.match(lines[j + 1])
        if function and location:
            name = function["function"]
            raws.append(RawFrame("go", normalise_path(location["path"]), number(location["line"]), None, name, _go_package(name)))
            j += 2
        elif raws and _GO_ELIDED.match(lines[j]):
            j += 1
        else:
            break
    if not raws:
        return None
    return traces_of(finish(raws)), j


# ---------------------------------------------------------------------------
# Numbered frames: PHP, Dart, gdb and AddressSanitizer all start a frame with `#N`.

# `#0 /var/www/src/Cart.php(42): Acme\Cart->add()`, `#1  0x... in main () at main.c:7`, `#0      Cart.add (package:shop/cart.dart:42:5)`
_NUMBERED = re.compile(r"\s*+#(?P<number>[0-9]++)\s++(?P<rest>\S.*)$")
# `#0 /var/www/src/Checkout.php(17): Acme\Cart->add('sku-1')`, `#1 [internal function]: Acme\Cart->{closure}()`, `#2 {main}`
PHP_FRAME = re.compile(
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


def read_php(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
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
    while j < len(lines) and (match := PHP_FRAME.match(lines[j].strip())):
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
    raws = [RawFrame("php", error[0] if error else None, error[1] if error else None, None, function, module)]
    for index, (path, line_number, _) in enumerate(entries):
        function, module = _php_callee(calls[index + 1])
        raws.append(RawFrame("php", path, line_number, None, function, module))
    return traces_of(finish(raws)), j


# Dart's terse format in `dart test`: `package:shop/cart.dart 42:5      Cart.add`, `dart:async   _CustomZone.run`
_DART_TERSE = re.compile(r"(?P<path>\S++)(?: (?P<line>[0-9]++)(?::(?P<column>[0-9]++))?)?\s++(?P<function>\S.*)$")
# `<asynchronous suspension>` between Dart frames.
_DART_SUSPENSION = "<asynchronous suspension>"


def _dart_raw(location: str, line: int | None, column: int | None, function: str | None) -> RawFrame | None:
    """A Dart frame; ``package:shop/cart.dart`` is the file lib/cart.dart of package shop."""
    if not (location.endswith(".dart") or location.startswith("dart:")):
        return None
    module = None
    path = normalise_path(location)
    if location.startswith("package:"):
        module, _, inner = location[len("package:"):].partition("/")
        path = f"{module}/lib/{inner}"
    library = True if location.startswith("dart:") else None
    return RawFrame("dart", path, line, column, function, module or None, library)


def dart_numbered(line: str) -> RawFrame | None:
    """`#1      Cart.add (package:shop/cart.dart:42:5)`"""
    if not (match := _NUMBERED.match(line)) or not (rest := match["rest"]).endswith(")"):
        return None
    open_paren = rest.rfind(" (")
    if open_paren < 0 or not (parts := split_location(rest[open_paren + 2:-1])):
        return None
    return _dart_raw(parts[0], parts[1], parts[2], rest[:open_paren].strip())


def _dart_terse(line: str) -> RawFrame | None:
    if not (match := _DART_TERSE.match(line)):
        return None
    return _dart_raw(match["path"], number(match["line"]), number(match["column"]), match["function"])


def read_dart(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    for parse in (dart_numbered, _dart_terse):
        if parse(lines[i]) is None:
            continue
        raws: list[RawFrame] = []
        j = i
        while j < len(lines):
            if (raw := parse(lines[j])) is not None:
                raws.append(raw)
            elif lines[j].strip() != _DART_SUSPENSION:
                break
            j += 1
        return traces_of(finish(raws)), j
    return None


# gdb and AddressSanitizer after `#N`: `0x000055555555513d in Ledger::post (this=0x...) at /home/u/ledger.cpp:42`,
# `0x4f5e2b in post /home/u/ledger.c:42:13`, or gdb's frame #0 without an address: `main () at main.c:7`.
_C_ADDRESS = re.compile(r"0x[0-9a-fA-F]++ in ")
# `    at /home/u/ledger.cpp:42` when gdb wraps a long frame line.
_GDB_CONTINUATION = re.compile(r"\s++at (?P<location>\S++)$")


def c_frame(line: str) -> tuple[int, RawFrame] | None:
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
    raw = RawFrame("c")
    if " at " in body:
        head, _, location = body.rpartition(" at ")
        raw.function = head.split(" (", 1)[0]
    else:
        head, _, location = body.rpartition(" ")
        raw.function = (head or body).split("(", 1)[0].strip() or None
    set_location(raw, location)
    return number(match["number"]) or 0, raw


def read_c(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    """gdb's `bt` or a sanitizer report; frame numbers that restart at 0 start a new trace."""
    if c_frame(lines[i]) is None:
        return None
    traces: list[list[RawFrame]] = [[]]
    previous = -1
    j = i
    while j < len(lines):
        if found := c_frame(lines[j]):
            frame_number, raw = found
            if frame_number <= previous:
                traces.append([])
            traces[-1].append(raw)
            previous = frame_number
        elif (wrapped := _GDB_CONTINUATION.match(lines[j])) and traces[-1] and traces[-1][-1].path is None:
            set_location(traces[-1][-1], wrapped["location"])
        else:
            break
        j += 1
    return traces_of(*(finish(trace) for trace in traces)), j


# lldb: `  * frame #0: 0x0000000100003f5c Cart`Cart.add(_:) at Cart.swift:42:5`
_LLDB_FRAME = re.compile(r"\s*+(?:\* )?frame #[0-9]++: 0x[0-9a-fA-F]++ (?P<image>[^`\s]++)`(?P<rest>.*)$")
# Languages lldb frames are written in, by file extension (lldb serves several).
_LLDB_LANGUAGES = {"swift": "swift", "rs": "rust", "m": "c", "mm": "c", "c": "c", "cc": "c", "cpp": "c", "h": "c"}


def lldb_frame(line: str) -> RawFrame | None:
    if not (match := _LLDB_FRAME.match(line)):
        return None
    head, at, location = match["rest"].rpartition(" at ")
    function = (head if at else match["rest"]).split(" + ", 1)[0] or None
    raw = RawFrame("c", function=function)
    if at:
        set_location(raw, location)
    if raw.path:
        raw.language = _LLDB_LANGUAGES.get(raw.path.rpartition(".")[2], "c")
    return raw


def read_lldb(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    raws: list[RawFrame] = []
    j = i
    while j < len(lines) and (raw := lldb_frame(lines[j])) is not None:
        raws.append(raw)
        j += 1
    return (traces_of(finish(raws)), j) if raws else None


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


def read_swift_fatal(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    if not (found := swift_fatal_location(lines[i])):
        return None
    path, line_number = found
    library = True if path.startswith("Swift/") else None
    return traces_of(finish([RawFrame("swift", path, line_number, library=library)])), i + 1


def swift_crash_frame(line: str) -> RawFrame | None:
    if not (match := _SWIFT_CRASH_FRAME.match(line)):
        return None
    rest = match["rest"]
    raw = RawFrame("swift", library=True if match["image"].startswith(_SWIFT_SYSTEM_IMAGES) else None)
    head = rest
    if rest.endswith(")") and (open_paren := rest.rfind(" (")) >= 0:
        set_location(raw, rest[open_paren + 2:-1])
        head = rest[:open_paren]
    raw.function = head.rpartition(" + ")[0] or head
    if raw.path and not raw.path.endswith(".swift"):
        raw.language = "c"
    return raw


def read_swift_crash(lines: list[str], i: int) -> tuple[list[list[Frame]], int] | None:
    raws: list[RawFrame] = []
    j = i
    while j < len(lines) and (raw := swift_crash_frame(lines[j])) is not None:
        raws.append(raw)
        j += 1
    return (traces_of(finish(raws)), j) if raws else None
