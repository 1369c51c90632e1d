"""Test identifiers from test-runner output and prose.

A failing test names the behaviour that broke, and its id leads to the test
file and, through the test's body, to the code under test. Runners print ids
in their own notation (pytest node ids, ``--- FAIL: TestX/sub``,
``cart::tests::adds``, ``● Cart › adds items``, ``testTotal(com.acme.CartTest)``),
so each runner has a line reader here; they share the output's state where a
runner spreads one id over several lines (Jest's describe blocks, Go's
package line, Surefire's class lines).

The same test is often reported several times (a result line, a failure
section, a summary); ids are merged, in order of first appearance, and one
counts as failed when any report of it says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from rag_lsp.retrieval.evidence.build_errors import looks_like_path
from rag_lsp.retrieval.evidence.frames import clean_lines, normalise_path


@dataclass(frozen=True, slots=True)
class TestId:
    """One test as a runner or a person named it.

    ``path`` is the test file when the id names one; ``names`` are the name
    parts outermost first; ``module`` is the dotted module, class or package
    for ids without a file.
    """

    # Not a pytest test class, although its name starts with "Test".
    __test__ = False

    path: str | None
    names: tuple[str, ...]
    module: str | None
    framework: str
    failed: bool


# Words that say a test failed when they stand next to its id in prose.
_FAILURE_WORD = re.compile(
    r"(?:fail|fails|failed|failing|failure|broke|broken|breaks|error|errors|erroring|crash|crashes|crashed)$",
    re.IGNORECASE,
)
# A pytest node id: `tests/test_cart.py::TestCart::test_total[a-b]`, `tests\\test_cart.py::test_x`.
# The path backtracks to its last `.py` within one token, and tokens start only at a boundary.
_PYTEST_ID = re.compile(r"(?<![\w./\\-])(?P<path>[\w./\\-]*\.py)(?!\w)(?P<names>(?:::\w++)*+)")
# pytest's status words: `FAILED tests/x.py::test_a - ...` before an id, `tests/x.py::test_a[p] PASSED [ 50%]` after one.
_PYTEST_STATUS_BEFORE = re.compile(r"\s*+(?P<status>FAILED|ERROR|PASSED|SKIPPED|XFAIL|XPASS) ")
_PYTEST_STATUS_AFTER = re.compile(r"(?:\[[^\]]*+\])?\s++(?P<status>FAILED|ERROR|PASSED|SKIPPED|XFAIL|XPASS)\b")
# How far around an id its status or a failure word is looked for, which keeps each look constant-time.
_NEARBY_CHARS = 120
_PYTEST_FAILED = frozenset({"FAILED", "ERROR", "XPASS"})
# unittest: `FAIL: test_total (tests.test_cart.TestCart.test_total)` (3.11+) or `(tests.test_cart.TestCart)` (older).
_UNITTEST_HEADER = re.compile(r"(?:FAIL|ERROR): (?P<name>\w++) \((?P<dotted>\w++(?:\.\w++)++)\)")
# unittest's verbose result: `test_total (tests.test_cart.TestCart.test_total) ... FAIL`
_UNITTEST_VERBOSE = re.compile(r"(?P<name>\w++) \((?P<dotted>\w++(?:\.\w++)++)\)(?P<rest>.*)$")
_UNITTEST_RESULT = re.compile(r".*?\.\.\. (?P<status>ok|FAIL|ERROR|skipped|expected failure|unexpected success)\b")
# go test: `--- FAIL: TestTotal/sub_case (0.00s)`
_GO_RESULT = re.compile(r"\s*+--- (?P<status>FAIL|PASS|SKIP): (?P<name>\S++) \([0-9.]++s\)$")
# go test's package line: `FAIL\tgithub.com/acme/shop/cart\t0.012s`, `ok  \tgithub.com/acme/shop\t(cached)`
_GO_PACKAGE = re.compile(r"(?:FAIL|ok)\s++(?P<package>[^\s]++)\s++(?:[0-9.]++s|\(cached\)|\[[^\]]*+\])")
# cargo test: `test cart::tests::adds ... FAILED`, a doc test `test src/lib.rs - cart::Cart::add (line 10) ... FAILED`
_CARGO_RESULT = re.compile(
    r"test (?:(?P<file>\S++) - )?(?P<name>\w++(?:::\w++)*+)(?: \(line [0-9]++\))? \.\.\. (?P<status>ok|FAILED|ignored|bench)\b"
)
# cargo's failure sections: `failures:`, then `---- cart::tests::adds stdout ----` or `    cart::tests::adds`
_CARGO_FAILURES = re.compile(r"failures:$")
_CARGO_STDOUT = re.compile(r"---- (?P<name>\w++(?:::\w++)*+) stdout ----$")
_CARGO_LISTED = re.compile(r"    (?P<name>\w++(?:::\w++)*+)$")
_CARGO_RESULT_LINE = re.compile(r"test result: ")
# cargo-nextest: `        FAIL [   0.004s] shop cart::tests::adds`
_NEXTEST = re.compile(
    r"\s*+(?P<status>PASS|FAIL|SIGSEGV|SIGABRT|SIGBUS|TIMEOUT|LEAK)\s++\[\s*+[0-9.]++s\]\s++\S++\s++(?P<name>\w++(?:::\w++)*+)$"
)
# Jest's and Vitest's file lines: `FAIL src/cart.test.ts`, `PASS src/a.test.js (5.2 s)`, ` ❯ src/cart.test.ts (2 tests | 1 failed) 5ms`,
# and Vitest's `FAIL  src/cart.test.ts > Cart > adds items`.
_JS_FILE = re.compile(r"\s*+(?P<status>FAIL|PASS|❯|✓|×)\s++(?P<path>[^\s>]++)(?:\s++>\s++(?P<names>.+)|\s.*)?$")
_JS_TEST_FILE = re.compile(r"\.(?:[cm]?[jt]sx?|vue|svelte)$")
# A test result under a file: Jest `    ✕ adds items (5 ms)`, Vitest `   × Cart > adds items 3ms`.
_JS_TEST = re.compile(r"(?P<indent>\s*+)(?P<mark>[✓✔√✕✗×✘○↓])\s++(?P<name>\S.*)$")
_JS_TEST_TIME = re.compile(r"\s++(?:\([0-9.]++ ?m?s\)|[0-9.]++ ?m?s)$")
# Jest's prefixes for tests that did not run: `○ skipped adds items`, `✎ todo adds items`.
_JS_NOT_RUN = re.compile(r"(?:skipped|todo) ")
_JS_FAILED_MARKS = frozenset("✕✗×✘")
# Jest's failure heading: `  ● Cart › adds items`
_JEST_HEADING = re.compile(r"\s*+● (?P<names>\S.*)$")
_JEST_NOT_TESTS = frozenset({"Test suite failed to run", "Console"})
# A describe block's name in Jest's verbose listing: an indented line without a mark.
_JS_DESCRIBE = re.compile(r"(?P<indent>\s++)(?P<name>[^\s✓✔√✕✗×✘○↓●].*)$")
# Surefire: `Running com.acme.CartTest`, and the class result `Tests run: 3, Failures: 1, ... <<< FAILURE! - in com.acme.CartTest`
_SUREFIRE_RUNNING = re.compile(r"(?:\[INFO\] )?Running (?P<class>[\w$]++(?:\.[\w$]++)++)$")
_SUREFIRE_CLASS = re.compile(r"(?:\[\w++\] )?Tests run: .*?(?P<failure><<< (?:FAILURE|ERROR)!)? --? in (?P<class>[\w$.]++)$")
# Surefire's test lines: `testTotal(com.acme.CartTest)  Time elapsed: 0.01 s  <<< FAILURE!` (JUnit 4 style),
# `[ERROR] com.acme.CartTest.testTotal -- Time elapsed: 0.010 s <<< FAILURE!` (Surefire 3).
_JUNIT4_ID = re.compile(r"(?:\[\w++\]\s++)?\s*+(?P<method>[\w$]++)\((?P<class>[\w$]++(?:\.[\w$]++)*+)\)(?P<rest>.*)$")
_SUREFIRE3_ID = re.compile(r"\[\w++\] (?P<qualified>[\w$]++(?:\.[\w$]++)++)(?:\(\))? --? Time elapsed.*?(?P<failure><<< (?:FAILURE|ERROR)!)?$")
# Lines that end a Surefire summary section: `[INFO] ...`, `[WARNING] ...`, `[ERROR] Tests run: 3, Failures: 1`.
_SUREFIRE_SECTION_END = re.compile(r"\[(?:INFO|WARNING)\]|(?:\[ERROR\] )?Tests run:")
# Surefire's summary sections: `[ERROR] Failures:`, `[ERROR] Errors:`, `Failed tests:`, `Tests in error:`
_SUREFIRE_SECTION = re.compile(r"(?:\[ERROR\] )?(?:Failures|Errors|Failed tests|Tests in error):\s*+$")
# An entry of a summary section: `[ERROR]   CartTest.testTotal:42 expected: <3> but was: <2>`, `CartTest.testX:10->helper:20 »`
_SUREFIRE_ENTRY = re.compile(r"(?:\[ERROR\])?\s++(?P<class>[\w$]++(?:\.[\w$]++)*?)\.(?P<method>[\w$]++)(?::[0-9]++)?(?:->\S++)*+(?:\s.*)?$")
# Gradle: `CartTest > testTotal() FAILED`, `com.acme.CartTest > adds items FAILED`
_GRADLE = re.compile(r"(?P<class>[\w$]++(?:\.[\w$]++)*+) > (?P<name>.+?)(?:\(\))? (?P<status>FAILED|PASSED|SKIPPED)$")
# RSpec's rerun lines: `rspec ./spec/cart_spec.rb:12 # Cart adds items`, `rspec ./spec/cart_spec.rb[1:2:1] # Cart adds items`
_RSPEC = re.compile(r"rspec (?P<path>\S+?\.rb)(?::[0-9]++|\[[0-9:,]++\])? # (?P<description>.+)$")
# PHPUnit: `1) Tests\\CartTest::testTotal`, `2) Tests\\CartTest::testAdd with data set #0 (1, 2)`
_PHPUNIT = re.compile(r"[0-9]++\) (?P<class>[\w\\]++)::(?P<method>\w++)(?: with data set .*)?$")
# PHPUnit's section headings: `There was 1 failure:`, `There were 2 errors:`, `There was 1 risky test:`
_PHPUNIT_SECTION = re.compile(r"There (?:was|were) [0-9]++ (?P<kind>[\w ]+?):$")
# Any other runner: `FAILED some/test_id`, `[FAIL] Acme.Tests.CartTests.AddsItems`, `  Failed Acme.Tests.CartTests.AddsItems [12 ms]`
_GENERIC_FAILED = re.compile(r"\s*+(?:FAILED|FAIL|\[FAIL\]|Failed)[: ]\s*+(?P<id>[^\s\[\]]++)")
# A generic id must look like an identifier of code, not a word: a separator, a digit or an inner capital.
_GENERIC_ID_SHAPE = re.compile(r".+[._/:#\\0-9A-Z]")


@dataclass(slots=True)
class _State:
    """What one runner's earlier lines say about a later line."""

    found: list[TestId] = field(default_factory=list)
    # Jest/Vitest: the file being reported, its framework, whether its test listing is being read,
    # and the listing's open describe blocks as (indent, name).
    js_file: str | None = None
    js_framework: str = "jest"
    js_listing: bool = False
    describes: list[tuple[int, str]] = field(default_factory=list)
    # Go: indexes of ids waiting for their package line.
    go_pending: list[int] = field(default_factory=list)
    # Surefire: simple class name → qualified name, and whether a failure summary is being read.
    classes: dict[str, str] = field(default_factory=dict)
    in_junit_summary: bool = False
    # cargo: inside a `failures:` section.
    in_cargo_failures: bool = False
    # PHPUnit: whether the current numbered section lists failures.
    phpunit_failing: bool = True

    def add(self, path: str | None, names: tuple[str, ...], module: str | None, framework: str, failed: bool) -> int:
        self.found.append(TestId(normalise_path(path) if path else None, names, module, framework, failed))
        return len(self.found) - 1


def _adjacent_words(line: str, start: int, end: int) -> tuple[str, str]:
    """The words right before and after ``line[start:end]``, punctuation stripped."""
    before = line[max(0, start - _NEARBY_CHARS):start].rstrip(" :,-—").rpartition(" ")[2]
    after = line[end:end + _NEARBY_CHARS].lstrip(" :,-—").partition(" ")[0].rstrip(".,;:!")
    return before, after


def _read_pytest(state: _State, line: str, next_line: str) -> bool:
    """Node ids in summaries, verbose results and prose; a status or failure word nearby says failed.

    A status before an id is pytest's summary (`FAILED id - message`), one after it a verbose result
    (`id PASSED [ 50%]`); a file without test names is an id only in a summary (`ERROR tests/x.py`).
    """
    if ".py" not in line:
        return False
    summary = _PYTEST_STATUS_BEFORE.match(line)
    found = False
    for match in _PYTEST_ID.finditer(line):
        names = tuple(name for name in match["names"].split("::") if name)
        status = summary["status"] if summary and summary.end() == match.start() else None
        if not names and status is None:
            continue
        if status is None and (after := _PYTEST_STATUS_AFTER.match(line[match.end():match.end() + _NEARBY_CHARS])):
            status = after["status"]
        if status is not None:
            failed = status in _PYTEST_FAILED
        else:
            failed = any(_FAILURE_WORD.match(word) for word in _adjacent_words(line, match.start(), match.end()))
        state.add(match["path"], names, None, "pytest", failed)
        found = True
    return found


def _unittest_id(state: _State, name: str, dotted: str, failed: bool) -> None:
    # 3.11+ prints the test's full id; older versions print its class.
    module = dotted.rpartition(".")[0] if dotted.rpartition(".")[2] == name else dotted
    state.add(None, (module.rpartition(".")[2], name), module, "unittest", failed)


def _read_unittest(state: _State, line: str, next_line: str) -> bool:
    if match := _UNITTEST_HEADER.match(line):
        _unittest_id(state, match["name"], match["dotted"], True)
        return True
    if match := _UNITTEST_VERBOSE.match(line):
        # A test with a docstring prints the docstring and its result on the next line.
        result = _UNITTEST_RESULT.match(match["rest"]) or _UNITTEST_RESULT.match(next_line)
        if result:
            _unittest_id(state, match["name"], match["dotted"], result["status"] in ("FAIL", "ERROR", "unexpected success"))
            return True
    return False


def _read_go(state: _State, line: str, next_line: str) -> bool:
    if match := _GO_RESULT.match(line):
        names = tuple(part for part in match["name"].split("/") if part)
        state.go_pending.append(state.add(None, names, None, "go", match["status"] == "FAIL"))
        return True
    if match := _GO_PACKAGE.match(line):
        for index in state.go_pending:
            state.found[index] = replace(state.found[index], module=match["package"])
        state.go_pending.clear()
        return True
    return False


def _cargo_id(state: _State, name: str, failed: bool, path: str | None = None) -> None:
    parts = tuple(name.split("::"))
    state.add(path, parts, "::".join(parts[:-1]) or None, "cargo", failed)


def _read_cargo(state: _State, line: str, next_line: str) -> bool:
    if (match := _CARGO_RESULT.match(line)) and (match["file"] or ".rs").endswith(".rs"):
        _cargo_id(state, match["name"], match["status"] == "FAILED", match["file"])
        return True
    if match := _NEXTEST.match(line):
        _cargo_id(state, match["name"], match["status"] != "PASS")
        return True
    if _CARGO_FAILURES.match(line):
        state.in_cargo_failures = True
        return True
    if _CARGO_RESULT_LINE.match(line):
        state.in_cargo_failures = False
        return True
    if state.in_cargo_failures and (match := _CARGO_STDOUT.match(line) or _CARGO_LISTED.match(line)):
        _cargo_id(state, match["name"], True)
        return True
    return False


def _js_names(text: str) -> tuple[str, ...]:
    """Vitest's `Cart > adds items` and Jest's `Cart › adds items` → ("Cart", "adds items")."""
    separator = " › " if " › " in text else " > "
    return tuple(part.strip() for part in text.split(separator) if part.strip())


def _pop_describes(state: _State, indent: int) -> None:
    """Close the describe blocks a line at ``indent`` is not inside."""
    while state.describes and state.describes[-1][0] >= indent:
        state.describes.pop()


def _read_js_file(state: _State, line: str) -> bool:
    """A file line starts that file's report; Vitest's `FAIL  file > test` line also names a test."""
    if not (match := _JS_FILE.match(line)) or not _JS_TEST_FILE.search(match["path"]):
        return False
    state.js_file, state.js_listing = match["path"], True
    state.js_framework = "jest" if match["status"] in ("FAIL", "PASS") and not match["names"] else "vitest"
    state.describes.clear()
    if match["names"]:
        state.add(match["path"], _js_names(match["names"]), None, "vitest", match["status"] == "FAIL")
    return True


def _read_js(state: _State, line: str, next_line: str) -> bool:
    if _read_js_file(state, line):
        return True
    if match := _JEST_HEADING.match(line):
        # Without its file line, a heading is only trusted with Jest's `›` between its names.
        if state.js_file is None and " › " not in match["names"]:
            return False
        names = _js_names(match["names"])
        if names and names[0] not in _JEST_NOT_TESTS:
            state.add(state.js_file, names, None, state.js_framework, True)
        state.js_listing = False
        return True
    if state.js_file is None or not state.js_listing:
        return False
    if match := _JS_TEST.match(line):
        _pop_describes(state, len(match["indent"]))
        leaf = _js_names(_JS_NOT_RUN.sub("", _JS_TEST_TIME.sub("", match["name"]), count=1))
        names = tuple(name for _, name in state.describes) + leaf
        state.add(state.js_file, names, None, state.js_framework, match["mark"] in _JS_FAILED_MARKS)
        return True
    if (match := _JS_DESCRIBE.match(line)) and state.js_framework == "jest":
        _pop_describes(state, len(match["indent"]))
        state.describes.append((len(match["indent"]), match["name"].strip()))
        return True
    return False


def _junit_class(state: _State, name: str) -> str:
    """A class as written, qualified when an earlier Surefire line named its package."""
    return state.classes.get(name, name)


def _remember_class(state: _State, qualified: str) -> None:
    state.classes[qualified.rpartition(".")[2]] = qualified


def _junit_id(state: _State, qualified: str, method: str | None, failed: bool) -> None:
    qualified = _junit_class(state, qualified)
    simple = qualified.rpartition(".")[2]
    state.add(None, (simple, method) if method else (simple,), qualified, "junit", failed)


def _read_junit(state: _State, line: str, next_line: str) -> bool:
    if match := _SUREFIRE_RUNNING.match(line):
        _remember_class(state, match["class"])
        return True
    if match := _SUREFIRE_CLASS.match(line):
        _remember_class(state, match["class"])
        _junit_id(state, match["class"], None, match["failure"] is not None)
        return True
    if _SUREFIRE_SECTION.match(line):
        state.in_junit_summary = True
        return True
    if match := _SUREFIRE3_ID.match(line):
        qualified, _, method = match["qualified"].rpartition(".")
        _junit_id(state, qualified, method, match["failure"] is not None)
        return True
    if (match := _JUNIT4_ID.match(line)) and _looks_like_class(match["class"]):
        rest = match["rest"]
        failed = state.in_junit_summary or "<<< FAILURE" in rest or "<<< ERROR" in rest
        if state.in_junit_summary or "Time elapsed" in rest or rest.startswith(":"):
            _junit_id(state, match["class"], match["method"], failed)
            return True
    if state.in_junit_summary:
        if (match := _SUREFIRE_ENTRY.match(line)) and _looks_like_class(match["class"]):
            _junit_id(state, match["class"], match["method"], True)
            return True
        # Other lines inside a summary continue a multi-line message.
        state.in_junit_summary = not _SUREFIRE_SECTION_END.match(line)
    if (match := _GRADLE.match(line)) and _looks_like_class(match["class"]):
        _junit_id(state, match["class"], match["name"], match["status"] == "FAILED")
        return True
    return False


def _looks_like_class(qualified: str) -> bool:
    """A JVM class name: its last segment starts with a capital."""
    return qualified.rpartition(".")[2][:1].isupper()


def _read_rspec(state: _State, line: str, next_line: str) -> bool:
    if match := _RSPEC.match(line):
        # RSpec joins example group and example with spaces, so the description stays one name.
        state.add(match["path"], (match["description"].strip(),), None, "rspec", True)
        return True
    return False


def _read_phpunit(state: _State, line: str, next_line: str) -> bool:
    if match := _PHPUNIT_SECTION.match(line):
        state.phpunit_failing = match["kind"].rstrip("s") in ("failure", "error")
        return True
    if match := _PHPUNIT.match(line):
        class_name = match["class"]
        state.add(None, (class_name.rpartition("\\")[2], match["method"]), class_name, "phpunit", state.phpunit_failing)
        return True
    return False


def _read_generic(state: _State, line: str, next_line: str) -> bool:
    """`FAILED <id>` from any other runner; a file-like id is a path, anything else one name."""
    if not (match := _GENERIC_FAILED.match(line)):
        return False
    identifier = match["id"].rstrip(".,:;")
    if not (identifier[:1].isalpha() or identifier[:1] in "/._") or not _GENERIC_ID_SHAPE.match(identifier):
        return False
    if looks_like_path(identifier) and "." in identifier.rpartition("/")[2]:
        state.add(identifier, (), None, "generic", True)
    else:
        state.add(None, (identifier,), None, "generic", True)
    return True


def _merge(found: list[TestId]) -> list[TestId]:
    """One id per test, in order of first appearance, failed when any report of it failed."""
    merged: dict[tuple[str, str | None, tuple[str, ...], str | None], TestId] = {}
    for test in found:
        key = (test.framework, test.path, test.names, test.module)
        if key in merged:
            if test.failed and not merged[key].failed:
                merged[key] = replace(merged[key], failed=True)
        else:
            merged[key] = test
    return list(merged.values())


# Tried in this order on each line; the first reader that recognises the line takes it.
# Runner-specific layouts come before pytest's node ids, which are also found in prose.
_READERS = (
    _read_go, _read_cargo, _read_unittest, _read_junit, _read_rspec, _read_phpunit, _read_js, _read_pytest,
    _read_generic,
)


def parse_test_ids(text: str) -> list[TestId]:
    """Every test id in ``text``, merged per test, in order of first appearance.

    Never raises; text without test ids gives an empty list.
    """
    state = _State()
    lines = clean_lines(text)
    for index, line in enumerate(lines):
        if not line.strip():
            # Blank lines end Jest's listing and Surefire's summary sections.
            state.js_listing = state.in_junit_summary = False
            continue
        next_line = lines[index + 1] if index + 1 < len(lines) else ""
        any(reader(state, line, next_line) for reader in _READERS)
    return _merge(state.found)
