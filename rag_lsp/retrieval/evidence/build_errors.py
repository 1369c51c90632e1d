"""File locations from compiler, linter and test-runner output.

Build and lint output points at code more precisely than any question: a
path, a line, often a column and a message. Tools agree on little beyond
``path:line[:col]``, so one scanner finds those anywhere in a line and the
known tools' layouts add what it cannot see: a file named on a header line
(ESLint), a message on the line before (rustc), a path without a line (a
failed Jest file, pytest's short summary).

Stack frame lines are left to ``traces.parse_frames``: a frame is where code
ran, a location is what a tool complains about. One-line error reports such
as a Rust panic or a PHP fatal error are both.

Every pattern is anchored at the line's start or at a token boundary, and
its variable parts cannot trade characters with each other, so scanning stays
linear in the line's length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag_lsp.retrieval.evidence.frames import clean_lines, normalise_path, number, split_location
from rag_lsp.retrieval.evidence.native_traces import php_error_location
from rag_lsp.retrieval.evidence.traces import is_frame_line


@dataclass(frozen=True, slots=True)
class Location:
    """A place a tool reported, with its message and severity when the tool printed them."""

    path: str
    line: int | None
    column: int | None
    message: str | None
    severity: str | None
    tool: str


# Extensions of files a diagnostic can be about: code, build files and configuration.
SOURCE_EXTENSIONS = frozenset({
    "py", "pyi", "pyx", "ipynb", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "vue", "svelte", "astro",
    "go", "rs", "java", "kt", "kts", "scala", "groovy", "gradle", "clj", "cljs", "c", "h", "cc", "cpp", "cxx",
    "hpp", "hh", "hxx", "ino", "m", "mm", "cs", "fs", "fsx", "vb", "csproj", "sln", "props", "targets", "php",
    "rb", "erb", "rake", "gemspec", "swift", "dart", "ex", "exs", "erl", "hrl", "lua", "pl", "pm", "r", "jl",
    "hs", "ml", "mli", "elm", "zig", "nim", "sol", "sh", "bash", "zsh", "ps1", "sql", "proto", "graphql",
    "json", "jsonc", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml", "html", "htm", "css", "scss", "sass",
    "less", "md", "rst", "tf", "hcl", "cmake", "mk", "bzl", "nix", "dockerfile",
})
# Files that matter without an extension.
SOURCE_FILE_NAMES = frozenset({
    "Makefile", "Dockerfile", "Gemfile", "Rakefile", "Jenkinsfile", "Vagrantfile", "BUILD", "WORKSPACE", "Podfile",
})
_PYTHON = ("py", "pyi")
_PYTHON_SUFFIXES = (".py", ".pyi")
_C_FAMILY = frozenset({"c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm", "ino"})
_TYPESCRIPT = frozenset({"ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "vue"})
# Severity words as tools print them, and the name this module reports.
_SEVERITIES = {
    "error": "error", "fatal error": "error", "warning": "warning", "warn": "warning",
    "note": "note", "help": "note", "hint": "note", "remark": "note", "info": "info", "information": "info",
}

# Characters of a path token; a token must not continue a word, a path, a URL or a `scheme:`.
_PATH_CHARS = r"\w.~@+%$/\\\-"
# `src/cart.py:12:5`, `C:\src\a.py:3`, `file:///home/u/a.js:1:2`, `Cart.cs(12,5)`, `Cart.cs(12,5,12,9)`
_LOCATION = re.compile(
    rf"(?<![{_PATH_CHARS}:])"
    rf"(?P<path>(?:file://)?(?:/?[A-Za-z]:(?=[\\/]))?[{_PATH_CHARS}]++)"
    r"(?::(?P<line>[0-9]++)(?::(?P<column>[0-9]++))?(?!\w)"
    r"|\((?P<paren_line>[0-9]++)(?:,(?P<paren_column>[0-9]++))?(?:,[0-9]++,[0-9]++)?\))"
)
# A location needs a number right after a colon or a parenthesis: `:12`, `(12`. Lines without one skip the scan.
_NUMBER_AFTER_SEPARATOR = re.compile(r"[:(][0-9]")
# What may follow a location at the start of a line: `: error: msg`, ` - error TS2322: msg`, `: E501 msg`.
_SEVERITY = re.compile(
    r"\s*+[:-]?\s*+(?P<severity>fatal error|error|warning|warn|note|help|hint|remark|information|info)\b"
    r"(?:\s++(?P<code>[A-Z]{1,4}[0-9]++))?\s*+:?\s*+(?P<message>.*)$",
    re.IGNORECASE,
)
# What pytest prints after the innermost entry's location: `tests/test_cart.py:12: AssertionError`.
_PYTEST_EXCEPTION = re.compile(r":\s++(?P<exception>[A-Z]\w*+)$")
# rustc's header before the location: `error[E0308]: mismatched types`, `warning: unused variable: \`x\``
_RUST_HEADER = re.compile(r"(?P<severity>error|warning|note|help)(?:\[(?P<code>\w++)\])?: (?P<message>.+)$")
# rustc's location arrows: `  --> src/main.rs:4:5` for the primary span, `  ::: src/lib.rs:10:1` for a related one.
_RUST_ARROW = re.compile(r"\s*+(?P<arrow>-->|:::) (?P<location>\S.*)$")
# ESLint's stylish format: a file on its own line, then `  12:5  error  'x' is not defined  no-undef`.
_ESLINT_FILE = re.compile(rf"(?P<path>(?:[A-Za-z]:)?[{_PATH_CHARS}]++)$")
_ESLINT_PROBLEM = re.compile(r"\s++(?P<line>[0-9]++):(?P<column>[0-9]++)\s++(?P<severity>error|warning)\s++(?P<rest>\S.*)$")
# ESLint separates its message and rule columns with two or more spaces.
_COLUMN_GAP = re.compile(r"\s{2,}")
# pyright's CLI: `  /home/u/shop/src/cart.py:12:5 - error: Cannot access attribute "totl"` (paths may hold spaces).
_PYRIGHT = re.compile(
    r"\s++(?P<path>\S.*?):(?P<line>[0-9]++):(?P<column>[0-9]++) - (?P<severity>error|warning|information): (?P<message>.*)$"
)
# Maven's javac: `[ERROR] /home/u/shop/src/main/java/com/acme/Cart.java:[12,25] cannot find symbol`
_MAVEN = re.compile(r"\[(?P<severity>ERROR|WARNING)\] (?P<path>\S.*?):\[(?P<line>[0-9]++),(?P<column>[0-9]++)\] (?P<message>.*)$")
# Jest's failed file: `FAIL src/cart.test.ts` or `FAIL src/cart.test.ts (5.2 s)`; Vitest's `FAIL  src/cart.test.ts > Cart > adds`
_JEST_FAIL = re.compile(r"\s*+FAIL\s++(?P<path>[^\s>]++)(?:\s++>\s++(?P<test>.+)|\s++\([^)]*+\))?$")
# pytest's short summary: `FAILED tests/test_cart.py::TestCart::test_total - AssertionError: assert 3 == 4`
_PYTEST_SUMMARY = re.compile(r"(?:FAILED|ERROR) (?P<path>[^\s:]++)(?P<rest>.*)$")
# PHP's `... in /var/www/src/Cart.php on line 42` (the colon form is an ordinary location).
_PHP_ON_LINE = re.compile(r"(?<!\S)in (?P<path>\S++) on line (?P<line>[0-9]++)")
_PHP_ON_LINE_WORDS = " on line "


def extension(path: str) -> str:
    """The lower-cased extension of a path's file name, or ``""``."""
    name = path.rpartition("/")[2]
    return name.rpartition(".")[2].lower() if "." in name.lstrip(".") else ""


def looks_like_path(path: str) -> bool:
    """Whether a token names a file: a known extension, a known file name, or a slash and a letter."""
    if not path or "://" in path:
        return False
    name = path.rpartition("/")[2]
    if extension(path) in SOURCE_EXTENSIONS or name in SOURCE_FILE_NAMES:
        return True
    return "/" in path and any(character.isalpha() for character in path)


def _severity(word: str | None) -> str | None:
    """The severity a tool's word means, in this module's names."""
    return _SEVERITIES.get(word.lower()) if word else None


class _Collector:
    """Locations in order of appearance, the first of each (path, line, column) kept.

    It also remembers what a later line needs: the file an ESLint header named
    and the message of the last rustc header.
    """

    def __init__(self) -> None:
        self.found: list[Location] = []
        self._seen: set[tuple[str, int | None, int | None]] = set()
        self.eslint_file: str | None = None
        self.rust_header: tuple[str, str | None] | None = None

    def add(self, path: str, line: int | None, column: int | None, message: str | None, severity: str | None,
            tool: str) -> None:
        path = normalise_path(path)
        key = (path, line, column)
        if key in self._seen or not looks_like_path(path):
            return
        self._seen.add(key)
        self.found.append(Location(path, line, column, message or None, severity, tool))


def _tool_for(path: str, severity: str | None, code: str | None, dash: bool) -> str:
    """Which tool printed a line-start location, from the file's language and the line's layout."""
    ext = extension(path)
    if code and code.upper().startswith("TS"):
        return "tsc"
    if ext in _PYTHON:
        return "pyright" if dash else "mypy" if severity else "generic"
    if ext == "go":
        return "go"
    if ext == "rs":
        return "rustc"
    if ext == "java" and severity:
        return "javac"
    if ext in _C_FAMILY and severity:
        return "gcc"
    if ext in _TYPESCRIPT and dash:
        return "tsc"
    return "generic"


def _next_line_message(next_line: str, next_is_frame: bool) -> str | None:
    """A message printed on the line after a bare location, unless that line is evidence of its own."""
    text = next_line.strip()
    if not text or next_is_frame or _LOCATION.search(next_line):
        return None
    return text


def _line_start_location(
    collector: _Collector, match: re.Match[str], line: str, next_line: str, next_is_frame: bool
) -> None:
    """A location that starts its line: the compiler layout, whose rest is severity and message."""
    path = match["path"]
    line_number = number(match["line"] or match["paren_line"])
    column = number(match["column"] or match["paren_column"])
    rest = line[match.end():]
    if extension(path) in _PYTHON and (exception := _PYTEST_EXCEPTION.match(rest)):
        collector.add(path, line_number, column, exception["exception"], "error", "pytest")
        return
    if severity_match := _SEVERITY.match(rest):
        severity = _severity(severity_match["severity"])
        message = severity_match["message"].strip()
        tool = _tool_for(path, severity, severity_match["code"], rest.lstrip().startswith("-"))
    else:
        severity, message = None, rest.strip().lstrip(":-").strip()
        tool = _tool_for(path, None, None, False)
    collector.add(path, line_number, column, message or _next_line_message(next_line, next_is_frame), severity, tool)


def _scan_line(collector: _Collector, line: str, next_line: str, next_is_frame: bool) -> None:
    """Every generic location in a line; one at the line's start is read in the compiler layout.

    A location inside a sentence has the whole line as its message.
    """
    if not _NUMBER_AFTER_SEPARATOR.search(line):
        return
    whole_line = line.strip()
    indent = len(line) - len(line.lstrip())
    for match in _LOCATION.finditer(line):
        path = match["path"]
        # A bare word (`at 12:30`, `localhost:8080`) is no path; it is told apart before any normalising.
        if not (path in SOURCE_FILE_NAMES or "." in path or "/" in path or "\\" in path):
            continue
        line_number = number(match["line"] or match["paren_line"])
        if line_number is None or not looks_like_path(normalise_path(path)):
            continue
        if match.start() == indent:
            _line_start_location(collector, match, line, next_line, next_is_frame)
        else:
            column = number(match["column"] or match["paren_column"])
            collector.add(path, line_number, column, whole_line, None, "generic")


def _eslint_message(rest: str) -> str:
    """ESLint's message column, without the rule name in the last column."""
    columns = _COLUMN_GAP.split(rest.strip())
    return "  ".join(columns[:-1]) if len(columns) > 1 else columns[0]


def _read_rust_arrow(collector: _Collector, line: str) -> bool:
    if not (match := _RUST_ARROW.match(line)):
        return False
    message, severity = collector.rust_header or (None, None)
    if match["arrow"] == ":::":
        message, severity = None, "note"
    else:
        collector.rust_header = None
    if parts := split_location(match["location"].strip()):
        collector.add(parts[0], parts[1], parts[2], message, severity, "rustc")
    return True


def _read_pyright(collector: _Collector, line: str) -> bool:
    if not (match := _PYRIGHT.match(line)):
        return False
    collector.add(match["path"], number(match["line"]), number(match["column"]), match["message"],
                  _severity(match["severity"]), _tool_for(match["path"], "error", None, True))
    return True


def _read_maven(collector: _Collector, line: str) -> bool:
    if not (match := _MAVEN.match(line)):
        return False
    collector.add(match["path"], number(match["line"]), number(match["column"]), match["message"],
                  _severity(match["severity"]), "javac")
    return True


def _read_eslint(collector: _Collector, line: str) -> bool:
    """A problem line belongs to the file named by the last header line."""
    if match := _ESLINT_PROBLEM.match(line):
        if collector.eslint_file:
            collector.add(collector.eslint_file, number(match["line"]), number(match["column"]),
                          _eslint_message(match["rest"]), _severity(match["severity"]), "eslint")
        return True
    if (match := _ESLINT_FILE.match(line)) and extension(match["path"]) and looks_like_path(match["path"]):
        collector.eslint_file = match["path"]
        return True
    return False


def _read_jest(collector: _Collector, line: str) -> bool:
    if not (match := _JEST_FAIL.match(line)):
        return False
    if extension(match["path"]) and looks_like_path(match["path"]):
        collector.add(match["path"], None, None, match["test"], "error", "jest")
    return True


def _read_pytest_summary(collector: _Collector, line: str) -> bool:
    if not (match := _PYTEST_SUMMARY.match(line)) or not match["path"].endswith(_PYTHON_SUFFIXES):
        return False
    collector.add(match["path"], None, None, match["rest"].partition(" - ")[2], "error", "pytest")
    return True


# Layouts the generic scan cannot read. A line one of them takes is not scanned again.
_TOOL_LAYOUTS = (_read_rust_arrow, _read_pyright, _read_maven, _read_eslint, _read_jest, _read_pytest_summary)


def _read_php(collector: _Collector, line: str) -> None:
    """PHP's `... in /x/Cart.php on line 42`, and the location ending a PHP error message."""
    if found := php_error_location(line):
        collector.add(found[0], found[1], None, line.strip(), "error", "generic")
    if _PHP_ON_LINE_WORDS in line and (match := _PHP_ON_LINE.search(line)):
        collector.add(match["path"], number(match["line"]), None, line.strip(), None, "generic")


def parse_locations(text: str) -> list[Location]:
    """Every file location a compiler, linter or test runner printed in ``text``, in order, without repeats.

    Never raises; text without locations gives an empty list.
    """
    collector = _Collector()
    lines = clean_lines(text)
    frames = [is_frame_line(line) for line in lines] + [False]
    for index, line in enumerate(lines):
        if not line.strip() or frames[index]:
            continue
        if header := _RUST_HEADER.match(line):
            collector.rust_header = (header["message"], _severity(header["severity"]))
        if any(read(collector, line) for read in _TOOL_LAYOUTS):
            continue
        _read_php(collector, line)
        _scan_line(collector, line, lines[index + 1] if index + 1 < len(lines) else "", frames[index + 1])
    return collector.found
