"""Per-keystroke parsing equals a full parse: after any edit, querying only the changed top-level nodes and
reusing the others (shifted) yields exactly the definitions, references, imports and chunks of a fresh parse.

The files are real code of a realistic size: Python's own ``argparse`` module (about 2,700 lines), and for the
other grammars the language fixtures (real-world-style samples) repeated into files of several hundred lines.
Edits are random characters at random places (the oracle of ``tests/edit_oracle.py``), copies of other lines
(code moving around), and deletions of line ranges.
"""

from __future__ import annotations

import argparse
import inspect
import random
import re
from pathlib import Path

import pytest
from edit_oracle import apply, random_edit, split_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lsp import languages
from rag_lsp.index.parsing.incremental import MAX_RANGES, Changed, NodeCache
from rag_lsp.index.parsing.narrowing import Reparsed
from rag_lsp.index.parsing.parse import parse_file, parse_tree
from rag_lsp.index.parsing.window_parse import Window
from rag_lsp.workspace.documents import OpenDocument, TextEdit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"
REPEATS = 8


def real_files() -> dict[str, str]:
    files = {"argparse.py": Path(inspect.getsourcefile(argparse) or "").read_text(encoding="utf-8")}
    for language in ("javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "ruby"):
        sample = next((FIXTURES / language).glob("sample.*"))
        files[f"{language}/big{sample.suffix}"] = "\n".join([sample.read_text(encoding="utf-8")] * REPEATS)
    return files


FILES = real_files()


def line_edit(rng: random.Random, text: str) -> tuple[int, int, int, int, str]:
    """Copy a few lines elsewhere, or delete a few lines."""
    lines = split_lines(text)
    at = rng.randrange(len(lines))
    if rng.random() < 0.5:
        source = rng.randrange(len(lines))
        copied = "".join(content + "\n" for _, content in lines[source : source + rng.randint(1, 6)])
        return at, 0, at, 0, copied
    end = min(len(lines) - 1, at + rng.randint(1, 4))
    return at, 0, end, 0, ""


def assert_same(incremental, full) -> None:
    assert incremental.error == full.error
    assert incremental.definitions == full.definitions
    assert incremental.references == full.references
    assert incremental.imports == full.imports
    assert incremental.chunks == full.chunks


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(FILES)), st.randoms(use_true_random=False), st.integers(1, 5))
def test_incremental_extraction_equals_a_full_parse_after_random_edits(path, rng, edits) -> None:
    document = OpenDocument(path, FILES[path], 1)
    assert_same(parse_file(path, document.text, tree=document.tree, reuse=document.nodes),
                parse_file(path, document.text))
    for _ in range(edits):
        sl, sc, el, ec, new = line_edit(rng, document.text) if rng.random() < 0.4 else random_edit(rng, document.text)
        edit_equals_a_full_parse(document, TextEdit(sl, sc, el, ec, new))


def edit_equals_a_full_parse(document: OpenDocument, *edits: TextEdit) -> bool:
    """Apply ``edits`` (one burst, re-parsed once) and check the incremental parse against full ones; returns
    whether only a window was parsed."""
    path = document.path
    for edit in edits:
        document.apply(edit)
    tree = document.reparse()
    incremental = parse_file(path, document.text, tree=tree, reuse=document.nodes)
    if isinstance(tree, Window):
        # The window holds a syntax error exactly when the whole file does; without one it equals a fresh parse.
        # (With one, its nodes are what error recovery made of the window: ``test_typing_and_deleting_...``.)
        fresh = parse_tree(document.language, document.text.encode("utf-8"))
        assert fresh is not None and document.nodes.has_error == fresh.root_node.has_error
        if not fresh.root_node.has_error:
            assert_same(incremental, parse_file(path, document.text))
        return True
    # The oracle queries the same tree in full. (Where the text has syntax errors, tree-sitter's error
    # recovery may build a different tree when it re-parses incrementally than when it parses afresh;
    # that is tree-sitter's, and the index has always used the incremental tree.)
    whole = tree.tree if isinstance(tree, Reparsed) else tree
    assert_same(incremental, parse_file(path, document.text, tree=whole))
    if whole is not None and not whole.root_node.has_error:
        assert_same(incremental, parse_file(path, document.text))
    return False


def opened(path: str) -> tuple[OpenDocument, NodeCache]:
    """A buffer of one of ``FILES`` and its node cache after a first parse."""
    document = OpenDocument(path, FILES[path], 1)
    parse_file(path, document.text, tree=document.tree, reuse=document.nodes)
    return document, document.nodes


# While a statement is typed the buffer is often not valid code: the nodes without the error are reused too.
@pytest.mark.parametrize("inserted", ["    unused = 1\n", "    value = compute(\n"])
def test_a_one_line_edit_queries_only_the_nodes_it_touched(inserted) -> None:
    path = "argparse.py"
    document, cache = opened(path)
    total = cache.reused + cache.queried
    line = next(i for i, (_, content) in enumerate(split_lines(document.text)) if content.startswith("def "))
    document.apply(TextEdit(line + 1, 0, line + 1, 0, inserted))
    broken = inserted.endswith("(\n")
    # The edit touches no comment or string delimiter: a window around it is parsed, and holds the syntax error
    # the edit leaves, if any (the whole file has it too).
    tree = document.reparse()
    assert isinstance(tree, Window)
    incremental = parse_file(path, document.text, tree=tree, reuse=cache)
    assert cache.windowed and cache.has_error == broken
    fresh = parse_tree("python", document.text.encode("utf-8"))
    assert fresh is not None and fresh.root_node.has_error == broken
    if not broken:
        assert_same(incremental, parse_file(path, document.text))
    # The edited function is queried again (with a comment that may come after it, whose key ends with the type
    # of the node after it). Every other top-level node is reused.
    assert 1 <= cache.queried <= 2 and cache.reused == total - cache.queried


def test_errors_in_many_places_at_once_equal_a_full_parse() -> None:
    # A burst of edits writing a broken statement above each of sixteen classes makes more separate stretches of
    # changed nodes than are queried range by range (``MAX_RANGES``): the tree is queried once in full, and the
    # nodes not changed are still reused. (The classes lie over more than half the file: no window serves.)
    path = "argparse.py"
    document, cache = opened(path)
    classes = [i for i, (_, content) in enumerate(split_lines(document.text)) if content.startswith("class ")]
    assert len(classes) > 2 * MAX_RANGES
    chosen = classes[:MAX_RANGES] + classes[-MAX_RANGES:]
    for line in reversed(chosen):
        document.apply(TextEdit(line, 0, line, 0, "broken =\n"))
    tree = document.reparse()
    assert isinstance(tree, Reparsed) and tree.tree.root_node.has_error
    incremental = parse_file(path, document.text, tree=tree, reuse=cache)
    assert_same(incremental, parse_file(path, document.text, tree=tree.tree))
    assert cache.reused > 0
    # Completing the statements gives back a valid file, equal to a fresh parse.
    for above, line in enumerate(chosen):
        document.apply(TextEdit(line + above, 0, line + above + 1, 0, "broken = 1\n"))
    tree = document.reparse()
    assert isinstance(tree, Reparsed) and not tree.tree.root_node.has_error
    assert_same(parse_file(path, document.text, tree=tree, reuse=cache), parse_file(path, document.text))


# Small files and edit sequences for the cases where reusing a node's nesting, references and chunks could go
# wrong (``per_node.py``): each edit is applied in turn and the result compared with a full parse.
PYTHON = (
    "import os\n\n\n# The handler.\ndef first(a):\n    '''Doc é.'''\n    return os.path.join(a)\n\n\n"
    "class Second:\n    def method(self):\n        x = 1\n        y = 2\n        return first(x + y)\n\n"
    "    def other(self):\n        return 3\n\n\ndef last():\n    return Second().method()\n"
)
EDIT_SEQUENCES = {
    # Deleting ``def last():`` makes its indented body part of the class above: two top-level nodes become one.
    "merge two top-level nodes": ("a.py", PYTHON, [(19, 0, 20, 0, ""), (7, 0, 7, 0, "# moved\n")]),
    "open and close an unterminated string": ("a.py", PYTHON, [(11, 8, 11, 8, "s = '"), (11, 18, 11, 18, "'")]),
    "change indentation (a method becomes a function)": ("a.py", PYTHON, [(15, 0, 15, 4, ""), (16, 0, 16, 0, "  ")]),
    "edit the first and the last line": ("a.py", PYTHON, [(0, 0, 0, 0, "import sys\n"), (22, 0, 22, 0, "x = 1\n"),
                                                          (0, 0, 1, 0, "")]),
    "trailing spaces after a definition's last line (its chunk changes, its text does not)":
        ("a.py", PYTHON, [(6, 26, 6, 26, "   "), (6, 26, 6, 29, ""), (19, 0, 19, 0, "\n\n")]),
    "two top-level nodes on one line": ("a.py", PYTHON, [(0, 9, 0, 9, "; z = first(2)"),
                                                         (3, 0, 3, 0, "a = 1; b = first(a)  # note\n"),
                                                         (3, 0, 4, 0, "")]),
    "CRLF line breaks": ("a.py", PYTHON.replace("\n", "\r\n"), [(5, 0, 5, 0, "    pass\r\n"), (9, 0, 9, 0, "\r\n"),
                                                                (12, 4, 12, 8, "")]),
    "multi-byte text moving a node": ("a.py", PYTHON, [(0, 0, 0, 0, "# 中文 🎉 𝔘\n"), (6, 14, 6, 14, "ß中")]),
    "a one-line JavaScript file": ("a.js", "function a(x) { return b(x); } function b(y) { return y; }\n",
                                   [(0, 31, 0, 31, "const c = a(1); "), (0, 0, 0, 0, "\n\n")]),
    # Random edits (seed 1049 of a stress run; a list is a burst, re-parsed once) after which a top-level node
    # holding a syntax error has the same text as in the parse before but is recovered differently: kept by its
    # text, it filed the wrong definition (``Status.def`` where a full parse finds ``Status.class``).
    "a node with a syntax error is not reused by its text": ("typescript/big.ts", FILES["typescript/big.ts"], [
        [(127, 7, 979, 42, "    ("), (157, 0, 157, 0, "}\n")],
        [(202, 20, 298, 0, "class _return def "), (95, 38, 95, 38, "🎉'1é="),
         (208, 0, 208, 0, "  },\n  restore: (task: Task) => task,\n};\n\n")],
        [(133, 0, 133, 0, "\n"), (59, 15, 59, 15, 'x"')],
        (209, 1, 209, 1, "    x:")]),
    # The comment inserted takes the place of a copy of it 680 lines further on, so the changed nodes make three
    # byte ranges; C's tags anchor constants at the translation unit, so the query of every range meets the new
    # constant, which must still be found once (hypothesis found it in CI).
    "a definition every range's query meets": ("c/big.c", FILES["c/big.c"], [
        (66, 0, 66, 0, 'static const char DEFAULT_CURRENCY[] = "EUR";\n\n/* One movement of money. */\n')]),
    # Random edits (a stress run of this session's windows found both in code that predates them). A struct whose
    # ``;`` a syntax error now separates from it is the same text, but C's pattern asks for the ``;`` after it:
    # a node's key holds the type of the node after it.
    "an error between a struct and its semicolon": ("c/big.c", FILES["c/big.c"], [
        (21, 1, 80, 0, ":"), (668, 0, 668, 0, '\nstatic const char DEFAULT_CURRENCY[] = "EUR";\n\n'),
        (589, 13, 589, 13, "中:"), (126, 16, 509, 13, "def "), (166, 5, 166, 5, "a"), (197, 1, 197, 1, "🎉")]),
    # A stray ``#elif`` leaves a root that is itself an error: under it a node's finds depend on how recovery
    # nested it, and nothing is reused.
    "a root that is an error": ("cpp/big.cpp", FILES["cpp/big.cpp"], [
        (200, 0, 200, 0, ("int tls_port() {\n    return 443;\n}\n#elif defined(SERVER_PLAIN)\nint plain_port() {\n"
                          "    return 80;\n")),
        (314, 1, 314, 1, ";"), (1608, 0, 1611, 0, ""), (191, 14, 191, 14, "["), (1539, 0, 1542, 0, ""),
        (1077, 27, 1077, 27, ";")]),
}


@pytest.mark.parametrize("case", sorted(EDIT_SEQUENCES))
def test_edge_case_edits_equal_a_full_parse(case) -> None:
    path, text, edits = EDIT_SEQUENCES[case]
    document = OpenDocument(path, text, 1)
    assert_same(parse_file(path, document.text, tree=document.tree, reuse=document.nodes),
                parse_file(path, document.text))
    for step in edits:
        edit_equals_a_full_parse(document, *(TextEdit(*edit) for edit in (step if isinstance(step, list) else [step])))


def test_nodes_above_an_edit_hand_on_the_same_records() -> None:
    # The symbol table tells unchanged definitions apart by identity (``SymbolIndex.add_file``): the records of
    # a node that did not move are the very objects of the last parse, and those of a moved node are new.
    path = "argparse.py"
    document, cache = opened(path)
    before = parse_file(path, document.text, tree=document.tree, reuse=cache)
    middle = len(split_lines(document.text)) // 2
    document.apply(TextEdit(middle, 0, middle, 0, "# a new line\n"))
    after = parse_file(path, document.text, tree=document.reparse(), reuse=cache)
    assert cache.windowed
    assert_same(after, parse_file(path, document.text))
    old = {definition.start_line: definition for definition in before.definitions}
    above = [definition for definition in after.definitions if definition.end_line < middle]
    below = [definition for definition in after.definitions if definition.start_line > middle + 1]
    assert above and below
    assert all(old[definition.start_line] is definition for definition in above)
    assert all(old[definition.start_line - 1] is not definition for definition in below)


# Edits that keep a file valid, as most keystrokes in a valid file do: each should parse only a window.
COMMENT = {"python": "#", "ruby": "#"}
WORD = re.compile(rb"[A-Za-z_]\w{2,}")


def valid_edit(rng: random.Random, document: OpenDocument) -> TextEdit:
    """One of ``candidate_edit``'s edits after which the file still parses without a syntax error."""
    for _ in range(100):
        edit = candidate_edit(rng, document)
        text = apply(document.text, (edit.start_line, edit.start_character, edit.end_line, edit.end_character,
                                     edit.text))
        tree = parse_tree(document.language, text.encode("utf-8"))
        if tree is not None and not tree.root_node.has_error:
            return edit
    raise AssertionError(f"no edit keeps {document.path} valid")


def candidate_edit(rng: random.Random, document: OpenDocument) -> TextEdit:
    """A blank or comment line, a word lengthened, a top-level node copied below itself, or one deleted."""
    tops = [top for top in document.nodes.tops if top.start_row != top.end_row]
    top = rng.choice(tops)
    lines = split_lines(document.text)
    choice = rng.randrange(5)
    if choice == 0:
        return TextEdit(top.end_row + 1, 0, top.end_row + 1, 0, "\n")
    if choice == 1:
        row = rng.randint(top.start_row, top.end_row + 1)
        return TextEdit(row, 0, row, 0, f"{COMMENT.get(document.language, '//')} note {rng.random()}\n")
    if choice == 2:
        row = rng.randint(top.start_row, top.end_row)
        content = lines[row][1]
        words = list(WORD.finditer(content.encode("utf-8")))
        if content.isascii() and words:
            end = rng.choice(words).end()
            return TextEdit(row, end, row, end, "Z")
        return TextEdit(row, 0, row, 0, "\n")
    copied = "".join(content + "\n" for _, content in lines[top.start_row : top.end_row + 1])
    if choice == 3:
        return TextEdit(top.end_row + 1, 0, top.end_row + 1, 0, "\n" + copied)
    return TextEdit(top.start_row, 0, top.end_row + 1, 0, "")


@pytest.mark.parametrize("path", sorted(FILES))
def test_edits_keeping_a_file_valid_parse_windows_equal_to_full_parses(path) -> None:
    rng = random.Random(path)
    document, _ = opened(path)
    windows = 0
    for step in range(24):
        # Every fourth step is a burst of two edits, parsed once.
        document.apply(valid_edit(rng, document))
        if step % 4 == 3:
            document.apply(valid_edit(rng, document))
        windows += edit_equals_a_full_parse(document)
    assert windows >= 12


TYPED = "value = compute(a, [1, {2: x}])"


@pytest.mark.parametrize("path", sorted(FILES))
def test_typing_and_deleting_a_statement_leaves_no_trace(path) -> None:
    # A statement typed a character at a time into a new line (indented as the one below) of a top-level
    # node's body, then deleted a character at a time: the keystrokes touch no delimiter, so most parse a
    # window, holding the syntax error the keystroke left when the whole file has one (one whose error reaches
    # past the window parses the whole file, and windows resume once that parse's errors fit in one); where
    # the file is valid each equals a fresh parse, and once the statement is gone the index is the file's
    # first parse again.
    rng = random.Random(path)
    document, _ = opened(path)
    first = parse_file(path, document.text)
    tops = [top for top in document.nodes.tops if top.end_row - top.start_row >= 2]
    windows = errors = 0
    for top in rng.sample(tops, 2):
        # A new line, typed into and deleted a character at a time, then removed.
        row = rng.randint(top.start_row + 1, top.end_row - 1)
        content = split_lines(document.text)[row][1]
        indent = content[: len(content) - len(content.lstrip())]
        edit_equals_a_full_parse(document, TextEdit(row, 0, row, 0, indent + "\n"))
        for column, character in enumerate(TYPED, len(indent)):
            document.apply(TextEdit(row, column, row, column, character))
            windows += edit_equals_a_full_parse(document)
            errors += document.nodes.has_error
        for column in reversed(range(len(indent), len(indent) + len(TYPED))):
            document.apply(TextEdit(row, column, row, column + 1, ""))
            windows += edit_equals_a_full_parse(document)
        edit_equals_a_full_parse(document, TextEdit(row, 0, row + 1, 0, ""))
        assert_same(parse_file(path, document.text, tree=document.reparse(), reuse=document.nodes), first)
    assert errors and windows >= len(TYPED)


def test_a_window_planned_on_another_parse_is_not_used() -> None:
    path = "argparse.py"
    document, cache = opened(path)
    middle = len(split_lines(document.text)) // 2
    document.apply(TextEdit(middle, 0, middle, 0, "\n"))
    window = document.reparse()
    assert isinstance(window, Window)
    # The buffer is indexed again from its text before the window's turn comes: the window no longer fits.
    parse_file(path, document.text, tree=parse_tree("python", document.text.encode("utf-8")), reuse=cache)
    assert window.generation != cache.generation
    assert_same(parse_file(path, document.text, tree=window, reuse=cache), parse_file(path, document.text))
    assert not cache.windowed


def test_a_secret_typed_into_a_window_is_masked_as_in_a_full_parse() -> None:
    path = "argparse.py"
    document, cache = opened(path)
    assert cache.clean
    middle = len(split_lines(document.text)) // 2
    end = len(split_lines(document.text)) - 1
    # A word that is no secret alone, far below the edit: a window parses it.
    document.apply(TextEdit(end, 0, end, 0, "# hunter2xyz\n"))
    assert edit_equals_a_full_parse(document)
    # Assigned to a password it is one, and is masked wherever it stands, outside the edit's window too: the
    # edit parses the whole file.
    document.apply(TextEdit(middle, 0, middle, 0, 'password = "hunter2xyz"\n'))
    assert not edit_equals_a_full_parse(document)
    assert not cache.clean
    assert all("hunter2xyz" not in chunk.content for chunk in parse_file(path, document.text).chunks)
    # While the file holds a secret no window is parsed; once it is gone, windows come back.
    document.apply(TextEdit(middle + 1, 0, middle + 1, 0, "\n"))
    assert not edit_equals_a_full_parse(document)
    document.apply(TextEdit(middle, 0, middle + 1, 0, ""))
    assert not edit_equals_a_full_parse(document) and cache.clean
    document.apply(TextEdit(middle, 0, middle, 0, "\n"))
    assert edit_equals_a_full_parse(document)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=0, max_size=40).map(lambda data: data.replace(b"\x00", b"\n")),
       st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.binary(max_size=6)), min_size=1, max_size=5))
def test_a_burst_of_edits_is_one_changed_span(old: bytes, edits) -> None:
    # ``Changed`` joins a burst's edits into one span: outside it the new text is the old, moved.
    text, changed = old, None
    for where, length, inserted in edits:
        start = int(where * len(text))
        end = start + int(length * (len(text) - start))
        span = (start, end, start + len(inserted), text[:end].count(b"\n"), (text[:start] + inserted).count(b"\n"))
        changed = Changed.of(*span) if changed is None else changed.then(*span)
        text = text[:start] + inserted + text[end:]
    assert changed is not None
    assert text[: changed.start] == old[: changed.start]
    assert text[changed.new_end :] == old[changed.old_end :]
    assert old[: changed.old_end].count(b"\n") == changed.old_end_row
    assert text[: changed.new_end].count(b"\n") == changed.old_end_row + changed.row_delta


@pytest.mark.parametrize(("language", "before", "removed", "inserted", "after", "quiet"), [
    ("python", b"x = f", b"", b"(", b"", True),
    ("python", b"    value", b"", b" = compute(a, [1, {2: x}])", b"", True),
    ("python", b"x = ", b"", b'"', b"", False),
    ("python", b"print(x, ", b"", b"y", b")  # note", False),
    ("c", b"a ", b"*/", b"", b"", False),
    ("c", b"/", b"x", b"", b"* note", False),
    ("c", b"#ifnde", b"", b"f", b" GUARD", False),
    ("c", b"x = a / b ", b"", b"+", b" c;", True),
    ("ruby", b"", b"", b"=", b"begin", False),
    ("ruby", b"  text = <<~ENDTEX", b"", b"T", b"", False),
    ("ruby", b"  if name =~ ", b"", b"/", b"", False),
    ("tsx", b"  return ", b"", b"<", b"", False),
    ("tsx", b"  const total = count ", b"", b"+", b" 1;", True),
])
def test_an_edit_is_quiet_when_its_lines_hold_no_delimiter(language, before, removed, inserted, after, quiet) -> None:
    delimiters = languages.spec(language).delimiters
    assert Changed.is_quiet(delimiters, before, removed, inserted, after) == quiet


def one_big_node(language: str) -> str:
    """A fixture wrapped in one top-level node with a body (a class, a module, a namespace, a function), four
    times over: no window serves an edit inside it, and its changed node is queried only around the edit."""
    sample = next((FIXTURES / language).glob("sample.*")).read_text(encoding="utf-8")
    kept = [re.sub(r"^export (default )?", "", line) for line in sample.splitlines()
            if not re.match(r"(package|import|export \*|export \{|#include) ", line)]
    body = "\n".join(kept * 4)
    if language == "python":
        body = "\n".join(f"    {line}" if line else line for line in Path(inspect.getsourcefile(argparse) or "")
                         .read_text(encoding="utf-8").splitlines())
    # Python's class is decorated and TypeScript's function exported: a wrapper is gone through too.
    opening, closing = {"python": ("@dataclass\nclass Outer:", ""), "java": ("class Outer {", "}"),
                        "rust": ("mod outer {", "}"), "cpp": ("namespace outer {", "}"), "ruby": ("module Outer", "end"),
                        "typescript": ("export function outer() {", "}"),
                        "javascript": ("function outer() {", "}")}[language]
    return f"// one node\n{opening}\n{body}\n{closing}\n".removeprefix("// one node\n" if language in ("python", "ruby")
                                                                         else "")


@pytest.mark.parametrize("language", ["python", "java", "rust", "cpp", "ruby", "typescript", "javascript"])
def test_an_edit_inside_one_big_node_is_queried_only_around_it(language) -> None:
    # Comments added, letters changed and changed back, and secrets typed and deleted inside the node: each parse
    # equals a full one, and every edit that keeps the file valid queries the node only around the edit
    # (``narrowing.py``; one leaving a syntax error may too); a secret is found on the changed lines and masked
    # as in a full parse.
    suffix = {"python": "py", "java": "java", "rust": "rs", "cpp": "cpp", "ruby": "rb", "typescript": "ts",
              "javascript": "js"}[language]
    path = f"{language}/one.{suffix}"
    document = OpenDocument(path, one_big_node(language), 1)
    assert parse_file(path, document.text, tree=document.tree, reuse=document.nodes).error is None
    assert len(document.nodes.tops) <= 3 and not document.nodes.has_error
    mark = "#" if language in ("python", "ruby") else "//"
    rng = random.Random(language)
    valid = narrowed = 0
    for step in range(24):
        lines = split_lines(document.text)
        row = rng.randrange(2, len(lines) - 2)
        content = lines[row][1]
        indent = content[: len(content) - len(content.lstrip())]
        letters = [i for i, c in enumerate(content) if c.isalpha()]
        if step % 3 == 2:
            assert not edit_equals_a_full_parse(
                document, TextEdit(row, 0, row, 0, f'{indent}{mark} password = "hunter2xyz{step}"\n'))
            assert not document.nodes.clean
            undo = TextEdit(row, 0, row + 1, 0, "")
        elif step % 3 == 1 and letters:
            column = rng.choice(letters)
            assert not edit_equals_a_full_parse(document, TextEdit(row, column, row, column + 1, "x"))
            valid += not document.nodes.has_error
            narrowed += document.nodes.narrowed and not document.nodes.has_error
            undo = TextEdit(row, column, row, column + 1, content[column])
        else:
            assert not edit_equals_a_full_parse(document, TextEdit(row, 0, row, 0, f"{indent}{mark} note {step}\n"))
            valid += 1
            narrowed += document.nodes.narrowed
            continue
        assert not edit_equals_a_full_parse(document, undo)
        assert document.nodes.clean and not document.nodes.has_error
    assert narrowed == valid
