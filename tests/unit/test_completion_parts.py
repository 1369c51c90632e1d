"""The parts completion context is built from: import aliases, bindings and their resolution, definition
text rebuilt from chunks, signatures and docstrings, and Jaccard windows."""

from __future__ import annotations

import pytest
from conftest import write_tree

from rag_lsp.completion import similar
from rag_lsp.completion.cursor import code_point, enclosing, open_call, parameters
from rag_lsp.index.bindings import Binding, Resolver, file_bindings
from rag_lsp.index.outline import FileText, body, head, signature_end
from rag_lsp.index.parsing.parse import parse_file
from rag_lsp.index.root_index import Index
from rag_lsp.model import Definition

# Import aliases, as the parser records them.


@pytest.mark.parametrize(("path", "source", "expected"), [
    ("a.py", "from m import x as y, z\n", [("m", ("x", "z"), (("x", "y"),))]),
    ("a.py", "import a.b as c\n", [("a.b", (), (("*", "c"),))]),
    ("a.py", "from .k import *\n", [(".k", (), (("*", "*"),))]),
    ("a.py", "import q\n", [("q", (), ())]),
    ("a.ts", 'import {a as b, c} from "./m";\n', [("./m", ("a", "c"), (("a", "b"),))]),
    ("a.ts", 'import * as ns from "./n";\n', [("./n", (), (("*", "ns"),))]),
    ("a.ts", 'export {e as f, g} from "./e";\n', [("./e", ("e", "g"), (("e", "f"),))]),
    ("a.ts", 'export * from "./w";\n', [("./w", (), (("*", "*"),))]),
    ("a.tsx", 'import {a as b} from "./m";\n', [("./m", ("a",), (("a", "b"),))]),
    ("a.js", 'import {a as b} from "./m";\nexport * from "./w";\n',
     [("./m", ("a",), (("a", "b"),)), ("./w", (), (("*", "*"),))]),
])
def test_imports_record_their_aliases(path, source, expected):
    parsed = parse_file(path, source)
    assert [(i.module, i.names, i.aliases) for i in parsed.imports] == expected


def test_aliases_survive_the_cache(tmp_path, isolated_cache):
    write_tree(tmp_path / "ws", {"a.py": "from m import x as y\n", "b.ts": 'import * as ns from "./n";\n'})
    first = Index(tmp_path / "ws")
    first.refresh()
    again = Index(tmp_path / "ws")
    stats = again.refresh()
    assert stats.reused == 2
    assert again.imports == first.imports
    assert again.imports["a.py"][0].aliases == (("x", "y"),)


# Bindings.


def test_python_bindings():
    parsed = parse_file("app.py", "import os.path\nimport a.b as c\nfrom m import x as y, z\nfrom w import *\n")
    bindings = file_bindings(parsed.imports, "python")
    assert bindings.names["y"] == Binding("y", "m", "x", 3)
    assert bindings.names["z"] == Binding("z", "m", "z", 3)
    assert "x" not in bindings.names
    assert bindings.names["c"] == Binding("c", "a.b", "*", 2)
    assert bindings.names["os"].is_module and bindings.names["os.path"].is_module
    assert [item.module for item in bindings.wildcards] == ["w"]


def test_typescript_side_effect_imports_bind_nothing():
    parsed = parse_file("app.ts", 'import "./polyfill";\nimport * as ns from "./n";\n')
    bindings = file_bindings(parsed.imports, "typescript")
    assert set(bindings.names) == {"ns"}


RESOLVE = {
    "pkg/__init__.py": "from .core import compute as calc\nfrom .shapes import *\n",
    "pkg/core.py": "def compute(x):\n    return x\n",
    "pkg/shapes.py": "class Circle:\n    def area(self):\n        return 1\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/leaf.py": "def leaf():\n    return 1\n",
    "web/lib/index.ts": 'export { run as start } from "./run";\nexport * from "./util";\n',
    "web/lib/run.ts": "export function run(): void {}\n",
    "web/lib/util.ts": "export function helper(): number { return 1; }\n",
    "web/main.ts": "",
    "app.py": "",
}


@pytest.fixture
def resolver(tmp_path):
    index = Index(write_tree(tmp_path / "ws", RESOLVE), use_cache=False)
    index.refresh()
    return Resolver(index)


@pytest.mark.parametrize(("binding", "from_path", "expected"), [
    (Binding("calc", "pkg", "calc", 1), "app.py", [("pkg/core.py", "compute")]),
    (Binding("Circle", "pkg", "Circle", 1), "app.py", [("pkg/shapes.py", "Circle")]),
    (Binding("compute", ".core", "compute", 1), "pkg/__init__.py", [("pkg/core.py", "compute")]),
    (Binding("leaf", "..sub.leaf", "leaf", 1), "pkg/sub/x.py", [("pkg/sub/leaf.py", "leaf")]),
    (Binding("start", "./lib", "start", 1), "web/main.ts", [("web/lib/run.ts", "run")]),
    (Binding("helper", "./lib", "helper", 1), "web/main.ts", [("web/lib/util.ts", "helper")]),
    (Binding("Request", "requests", "Request", 1), "app.py", []),
])
def test_bindings_resolve_through_re_exports(resolver, binding, from_path, expected):
    target = resolver.binding(binding, from_path)
    assert [(d.path, d.qualname) for d in target.definitions] == expected


def test_modules_and_their_members(resolver):
    module = resolver.binding(Binding("sub", "pkg", "sub", 1), "app.py")
    assert module.modules == ("pkg/sub/__init__.py",)
    leaf = resolver.binding(Binding("leaf", "pkg.sub", "leaf", 1), "app.py")
    assert leaf.modules == ("pkg/sub/leaf.py",)
    member = resolver.attribute(leaf, "leaf")
    assert [(d.path, d.name) for d in member.definitions] == [("pkg/sub/leaf.py", "leaf")]
    circle = resolver.binding(Binding("Circle", "pkg", "Circle", 1), "app.py")
    assert [d.qualname for d in resolver.attribute(circle, "area").definitions] == ["Circle.area"]
    assert resolver.binding(Binding("core", "pkg", "*", 1), "app.py").modules == ("pkg/__init__.py",)
    # from . import leaf, inside the package itself.
    assert resolver.binding(Binding("leaf", ".", "leaf", 1), "pkg/sub/__init__.py").modules == ("pkg/sub/leaf.py",)


def test_re_export_loops_end(tmp_path):
    index = Index(write_tree(tmp_path / "ws", {"a.py": "from b import x\n", "b.py": "from a import x\n"}),
                  use_cache=False)
    index.refresh()
    assert not Resolver(index).binding(Binding("x", "a", "x", 1), "c.py")


# Definition text.

PYTHON_SOURCE = '''import os


@decorator(
    "arg",
)
def multi(
    first: int,
    second: str = "a:b",
) -> dict[str, int]:  # a comment: with a colon
    """First line.

    More.
    """
    value = first
    return {second: value}


class Shape(Base):
    """A shape."""

    sides = 0

    def __init__(self, sides: int) -> None:
        self.sides = sides

    def area(self) -> float:
        """The area."""
        return 0.0
'''


def definitions(source: str, path: str = "m.py") -> tuple[FileText, dict[str, Definition]]:
    parsed = parse_file(path, source)
    return FileText.from_chunks(parsed.chunks), {d.qualname: d for d in parsed.definitions}


def test_file_text_from_chunks_is_the_file_but_for_lines_no_chunk_holds():
    text, _ = definitions(PYTHON_SOURCE)
    original = PYTHON_SOURCE.splitlines()
    assert all(mine in ("", theirs) for mine, theirs in zip(text.lines, original))
    assert [n for n, line in enumerate(original, 1) if line.strip() and text.line(n) != line] == []


def test_signatures_span_lines_and_skip_decorators_strings_and_comments():
    text, found = definitions(PYTHON_SOURCE)
    assert signature_end(text, found["multi"], "python") == 10
    assert signature_end(text, found["Shape"], "python") == 19
    ts_text, ts_found = definitions("/** Doc { with a brace */\nexport function f(a: { x: number },\n"
                                    "  b: string): void {\n  return;\n}\n", "m.ts")
    assert signature_end(ts_text, ts_found["f"], "typescript") == 3


def test_head_is_signature_and_docstring_and_body_is_the_whole_function():
    text, found = definitions(PYTHON_SOURCE)
    shown = head(text, found["multi"], "python", "#")
    assert shown.content.splitlines() == PYTHON_SOURCE.splitlines()[3:14] + ["    # ..."]
    assert (shown.start_line, shown.end_line, shown.complete) == (4, 14, False)
    whole = body(text, found["multi"], "python", "#")
    assert whole.content == "\n".join(PYTHON_SOURCE.splitlines()[3:16]) and whole.complete


def test_a_class_head_has_its_constructor_and_its_body_outlines_the_methods():
    text, found = definitions(PYTHON_SOURCE)
    members = [d for d in found.values() if d.container == "Shape"]
    assert head(text, found["Shape"], "python", "#", members).content.splitlines() == [
        "class Shape(Base):", '    """A shape."""', "", "    def __init__(self, sides: int) -> None:",
        "        # ...",
    ]
    assert body(text, found["Shape"], "python", "#", members).content.splitlines() == [
        "class Shape(Base):", '    """A shape."""', "", "    sides = 0", "",
        "    def __init__(self, sides: int) -> None:", "        # ...", "",
        "    def area(self) -> float:", "        # ...",
    ]


def test_long_docstrings_are_cut():
    doc = "\n".join(f"    line {i}" for i in range(30))
    text, found = definitions(f'def f():\n    """\n{doc}\n    """\n    return 1\n')
    shown = head(text, found["f"], "python", "#").content.splitlines()
    assert shown[0] == "def f():" and shown[-1] == "    # ..." and len(shown) < 15


def test_declarations_are_shown_whole_when_short():
    text, found = definitions("export interface Cart {\n  id: string;\n  total: number;\n}\n", "m.ts")
    shown = head(text, found["Cart"], "typescript", "//")
    assert shown.content == "export interface Cart {\n  id: string;\n  total: number;\n}" and shown.complete


# Jaccard windows.


def test_windows_overlap_and_reach_the_end():
    lines = [f"line_{i} = {i}" for i in range(45)]
    found = similar.windows("f.py", lines)
    assert [(w.start_line, w.end_line) for w in found] == [(1, 20), (11, 30), (21, 40), (26, 45)]
    assert similar.windows("f.py", []) == []


def test_jaccard_ranks_by_shared_identifiers_with_ties_by_path():
    query = similar.terms("total = price * count")
    candidates = [
        similar.Window("b.py", 1, 20, similar.terms("total = price * count")),
        similar.Window("a.py", 1, 20, similar.terms("total = price * count")),
        similar.Window("c.py", 1, 20, similar.terms("other things")),
        similar.Window("d.py", 1, 20, similar.terms("price")),
    ]
    ranked = similar.rank(query, candidates, 5)
    assert [(round(score, 2), w.path) for score, w in ranked] == [(1.0, "a.py"), (1.0, "b.py"), (0.33, "d.py")]
    assert similar.query_terms(["a = 1", "b = 2", "c = 3"], 2) == frozenset({"a", "b"})


# Reading the cursor's file.


@pytest.mark.parametrize(("line", "character", "encoding", "expected"), [
    ("a🎉b", 3, "utf-16", 2),
    ("a🎉b", 2, "utf-16", 2),  # inside the emoji's surrogate pair: its end
    ("a🎉b", 4, "utf-16", 3),
    ("a🎉b", 5, "utf-16", None),
    ("a🎉b", 5, "utf-8", 2),
    ("a🎉b", 2, "utf-32", 2),
    ("a🎉b", 4, "utf-32", None),
    ("", 0, "utf-16", 0),
])
def test_positions_become_code_points(line, character, encoding, expected):
    assert code_point(line, character, encoding) == expected


@pytest.mark.parametrize(("header", "expected"), [
    ("def f(self, a: int, *, b: dict[str, int] = {}, **rest) -> None:", ["a", "b", "rest"]),
    ("export function g(this: Foo, name?: string, cb: (x: number) => void) {", ["name", "cb"]),
    ("class Shape:", []),
])
def test_parameters_of_a_signature(header, expected):
    assert parameters(header) == expected


@pytest.mark.parametrize(("lines", "line", "character", "expected"), [
    (["x = outer(1, inner(2), "], 1, 23, "outer"),
    (["x = mod.call(", "    a,", "    "], 3, 4, "mod.call"),
    (["x = [1, 2, "], 1, 11, None),
    (["done(1)", "x = "], 2, 4, None),
])
def test_the_call_being_typed(lines, line, character, expected):
    assert open_call(lines, line, character) == expected


def test_a_function_being_written_encloses_the_cursor_past_its_parsed_end(tmp_path):
    from rag_lsp.completion.cursor import analyse, expected_indent

    source = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        \n"
    index = Index(write_tree(tmp_path / "ws", {"m.py": source}), use_cache=False)
    index.refresh()
    analysis = analyse(index, "m.py", source.split("\n"), "python")
    # The parser ends g (and A) before its empty body line; the indentation says the cursor is in g.
    assert [d.qualname for d in enclosing(analysis, 6, 8)] == ["A", "A.g"]
    # At column 0 of that line the cursor is in neither.
    assert enclosing(analysis, 6, 0) == []
    # An empty line is not indented yet: it is as deep as the editor would indent it after the line above.
    cut = source.split("\n")
    cut[5] = ""
    analysis = analyse(index, "m.py", cut, "python")
    assert [d.qualname for d in enclosing(analysis, 6, 0)] == ["A", "A.g"]
    assert expected_indent(cut, 6) == 5 and expected_indent(["x = 1", "", ""], 3) == 0


def test_a_patched_analysis_equals_a_fresh_one(tmp_path):
    import random

    from rag_lsp.completion.cursor import analyse

    source = PYTHON_SOURCE + (
        "\n\ndef use():\n    value = multi(1)\n    shape = Shape(3)\n"
        "    return os.path.join(str(value), str(shape.area()))\n"
    )
    index = Index(write_tree(tmp_path / "ws", {"m.py": source}), use_cache=False)
    index.refresh()
    lines = source.split("\n")
    previous = analyse(index, "m.py", lines, "python")
    rng = random.Random(7)
    words = ["multi(2)", "Shape(1)", "self.area()", "os.getcwd()", "x = 1", "", "multi(Shape(multi(0)))"]
    for _ in range(40):
        changed = list(lines)
        for number in rng.sample(range(15, len(lines)), rng.randrange(1, 4)):
            changed[number] = "    " + rng.choice(words)
        patched = analyse(index, "m.py", changed, "python", previous)
        fresh = analyse(index, "m.py", changed, "python")
        assert patched.uses == fresh.uses
        assert patched.line_terms == fresh.line_terms
        previous, lines = patched, changed
