"""Server answers → places: every LSP shape rag_lsp accepts, what is dropped, and what is malformed."""

from __future__ import annotations

import pytest

from rag_lsp.langservers import results
from rag_lsp.langservers.results import Place, ServerCallError


def same(path: str, line0: int, units: int) -> int:
    return units


def span(line: int, start: int, end: int, end_line: int | None = None) -> dict:
    return {"start": {"line": line, "character": start}, "end": {"line": line if end_line is None else end_line,
                                                                  "character": end}}  # fmt: skip


@pytest.fixture
def root(tmp_path):
    (tmp_path / "pkg").mkdir()
    return tmp_path


def locations(raw, root):
    return results.locations("textDocument/definition", raw, root, same)


def test_location_forms_give_places_inside_the_root(root):
    uri = (root / "pkg" / "a.py").as_uri()
    location = {"uri": uri, "range": span(2, 4, 9)}
    link = {"targetUri": uri, "targetRange": span(0, 0, 0, 5), "targetSelectionRange": span(1, 6, 10)}
    assert locations(location, root) == [Place("pkg/a.py", 3, 4, 3, 9)]
    assert locations([location, link], root) == [Place("pkg/a.py", 3, 4, 3, 9), Place("pkg/a.py", 2, 6, 2, 10)]
    assert locations(None, root) == []
    assert locations([], root) == []


def test_results_outside_the_root_or_not_files_are_dropped(root):
    inside = {"uri": (root / "x.py").as_uri(), "range": span(0, 0, 1)}
    outside = [
        {"uri": "file:///usr/lib/python3/typing.py", "range": span(0, 0, 1)},
        {"uri": (root / ".." / "sibling.py").as_uri(), "range": span(0, 0, 1)},
        {"uri": "jdt://contents/rt.jar/java.lang/String.class", "range": span(0, 0, 1)},
        {"uri": "untitled:Untitled-1", "range": span(0, 0, 1)},
    ]
    assert locations([*outside, inside], root) == [Place("x.py", 1, 0, 1, 1)]


def test_percent_encoded_and_symlinked_paths_are_made_relative(root, tmp_path_factory):
    link = tmp_path_factory.mktemp("links") / "root-link"
    link.symlink_to(root)
    encoded = root.as_uri() + "/pkg/na%C3%AFve%20file.py"
    through_link = (link / "pkg" / "b.py").as_uri()
    raw = [{"uri": encoded, "range": span(0, 0, 1)}, {"uri": through_link, "range": span(0, 0, 1)}]
    assert [p.path for p in locations(raw, root)] == ["pkg/naïve file.py", "pkg/b.py"]
    assert [p.path for p in locations(raw, link)] == ["pkg/naïve file.py", "pkg/b.py"]


def test_positions_are_converted_per_file(root):
    calls = []

    def convert(path, line0, units):
        calls.append((path, line0, units))
        return units // 2

    raw = {"uri": (root / "a.py").as_uri(), "range": span(3, 4, 8)}
    assert results.locations("m", raw, root, convert) == [Place("a.py", 4, 2, 4, 4)]
    assert calls == [("a.py", 3, 4), ("a.py", 3, 8)]


@pytest.mark.parametrize(
    "raw",
    [
        {"oops": 1},
        "file:///x.py",
        [{"uri": 3, "range": span(0, 0, 1)}],
        [{"uri": "file:///r/a.py"}],
        [{"uri": "file:///r/a.py", "range": {"start": {"line": "1", "character": 0}, "end": {"line": 1,
                                                                                            "character": 0}}}],
        [{"uri": "file:///r/a.py", "range": {"start": {"line": True, "character": 0}, "end": {"line": 1,
                                                                                             "character": 0}}}],
        [{"uri": "file:///r/a.py", "range": span(-1, 0, 1)}],
        [{"uri": "file:///r/a.py", "range": {"start": {"line": 1}}}],
        [["file:///r/a.py"]],
    ],
    ids=["no-uri", "string", "uri-number", "no-range", "string-line", "bool-line", "negative", "no-character",
         "nested-list"],
)  # fmt: skip
def test_wrong_shapes_are_malformed(raw, tmp_path):
    root = tmp_path / "r"
    with pytest.raises(ServerCallError) as caught:
        results.locations("textDocument/definition", raw, root, same)
    assert caught.value.kind == "malformed"
    assert str(caught.value).startswith("textDocument/definition: ")
    assert "\n" not in str(caught.value)


def test_document_symbol_tree_is_flattened_with_containers(root):
    method = {"name": "area", "kind": 6, "range": span(1, 4, 8, 2), "selectionRange": span(1, 8, 12)}
    inner = {"name": "Inner", "kind": 5, "range": span(3, 4, 0, 4), "selectionRange": span(3, 10, 15),
             "children": [{"name": "x", "kind": 8, "range": span(4, 8, 9), "selectionRange": span(4, 8, 9)}]}
    shape = {"name": "Shape", "kind": 5, "range": span(0, 0, 0, 5), "selectionRange": span(0, 6, 11),
             "children": [method, inner]}
    top = {"name": "helper", "kind": 12, "range": span(6, 0, 3, 7), "selectionRange": span(6, 4, 10)}
    assert results.document_symbols("m", [shape, top], "pkg/s.py", root, same) == [
        Place("pkg/s.py", 1, 0, 6, 0, "Shape", "class", None),
        Place("pkg/s.py", 2, 4, 3, 8, "area", "method", "Shape"),
        Place("pkg/s.py", 4, 4, 5, 0, "Inner", "class", "Shape"),
        Place("pkg/s.py", 5, 8, 5, 9, "x", "field", "Inner"),
        Place("pkg/s.py", 7, 0, 8, 3, "helper", "function", None),
    ]  # fmt: skip


def test_symbol_information_lists_keep_their_container_names(root):
    uri = (root / "s.py").as_uri()
    raw = [
        {"name": "Shape", "kind": 5, "location": {"uri": uri, "range": span(0, 0, 5)}},
        {"name": "area", "kind": 6, "location": {"uri": uri, "range": span(1, 4, 8)}, "containerName": "Shape"},
        {"name": "odd", "kind": 99, "location": {"uri": uri, "range": span(2, 0, 3)}, "containerName": ""},
        {"name": "enum_member", "kind": 22, "location": {"uri": uri, "range": span(3, 0, 3)}},
    ]
    places = results.document_symbols("m", raw, "s.py", root, same)
    assert [(p.name, p.kind, p.container) for p in places] == [
        ("Shape", "class", None), ("area", "method", "Shape"), ("odd", None, None), ("enum_member", "enum_member", None)
    ]  # fmt: skip


@pytest.mark.parametrize(
    "raw",
    [
        [{"name": 3, "kind": 5, "range": span(0, 0, 1)}],
        [{"name": "x", "kind": "class", "range": span(0, 0, 1)}],
        [{"name": "x", "kind": 5}],
        [{"name": "x", "kind": 5, "range": span(0, 0, 1), "children": {"a": 1}}],
        {"name": "x"},
    ],
    ids=["name-number", "kind-string", "no-range", "children-object", "no-kind"],
)
def test_bad_document_symbols_are_malformed(raw, root):
    with pytest.raises(ServerCallError) as caught:
        results.document_symbols("textDocument/documentSymbol", raw, "s.py", root, same)
    assert caught.value.kind == "malformed"


def test_workspace_symbols_inside_the_root_with_ranges(root):
    raw = [
        {"name": "Ledger", "kind": 5, "location": {"uri": (root / "l.py").as_uri(), "range": span(9, 0, 6)},
         "containerName": "shop.ledger"},
        {"name": "List", "kind": 5, "location": {"uri": "file:///usr/lib/typing.py", "range": span(0, 0, 4)}},
        {"name": "Lazy", "kind": 5, "location": {"uri": (root / "z.py").as_uri()}},
    ]  # fmt: skip
    assert results.workspace_symbols("workspace/symbol", raw, root, same) == [
        Place("l.py", 10, 0, 10, 6, "Ledger", "class", "shop.ledger")
    ]
    assert results.workspace_symbols("workspace/symbol", None, root, same) == []
    with pytest.raises(ServerCallError):
        results.workspace_symbols("workspace/symbol", [{"name": "x", "kind": 5}], root, same)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ({"contents": {"kind": "markdown", "value": "```python\ndef f()\n```"}}, "```python\ndef f()\n```"),
        ({"contents": {"kind": "plaintext", "value": "  f() -> int  "}}, "f() -> int"),
        ({"contents": "plain marked string"}, "plain marked string"),
        ({"contents": {"language": "python", "value": "def f()"}}, "def f()"),
        ({"contents": ["first", {"language": "c", "value": "int x"}, ""]}, "first\n\nint x"),
        ({"contents": []}, None),
        ({"contents": {"kind": "markdown", "value": "   "}}, None),
        (None, None),
    ],
)
def test_hover_text_from_every_content_form(raw, text):
    assert results.hover_text("textDocument/hover", raw) == text


@pytest.mark.parametrize("raw", [{"value": "x"}, {"contents": 3}, {"contents": [{"kind": "markdown"}]}, "text"])
def test_bad_hovers_are_malformed(raw):
    with pytest.raises(ServerCallError) as caught:
        results.hover_text("textDocument/hover", raw)
    assert caught.value.kind == "malformed" and str(caught.value).startswith("textDocument/hover")
