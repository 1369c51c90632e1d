"""Every language with tree-sitter queries yields the known symbols of its fixture.

A fixture is ``tests/fixtures/languages/<language>/`` holding one source file
and ``expected.json``: definitions as ``[qualname, kind, start_line]``,
references as ``[name, line]``, imports as ``[module, [names]]`` and chunks as
``[qualname, kind, start_line, end_line]``. Each listed item must be found;
the parser may find more.
"""

import json
from importlib import resources
from pathlib import Path

import pytest

from rag_lsp import languages
from rag_lsp.index.parse import parse_file

FIXTURES = Path(__file__).parent.parent / "fixtures" / "languages"
QUERY_LANGUAGES = sorted(
    entry.name for entry in resources.files("rag_lsp").joinpath("queries").iterdir() if entry.is_dir()
)
REQUIRED = {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "ruby"}


def load(language: str):
    expected = json.loads((FIXTURES / language / "expected.json").read_text())
    source = (FIXTURES / language / expected["file"]).read_text()
    parsed = parse_file(expected["file"], source)
    return expected, parsed


def test_required_languages_have_queries():
    assert REQUIRED <= set(QUERY_LANGUAGES)


@pytest.mark.parametrize("language", QUERY_LANGUAGES)
def test_every_query_language_has_a_fixture(language):
    assert (FIXTURES / language / "expected.json").is_file(), f"no fixture for {language}"


@pytest.mark.parametrize("language", QUERY_LANGUAGES)
def test_queries_compile(language):
    for kind in languages.QUERY_KINDS:
        if languages.query_source(language, kind) is not None:
            assert languages.ts_query(language, kind) is not None


@pytest.mark.parametrize("language", QUERY_LANGUAGES)
def test_fixture_detected_as_language(language):
    _expected, parsed = load(language)
    assert parsed.language == language
    assert parsed.error is None


@pytest.mark.parametrize("language", QUERY_LANGUAGES)
def test_definitions(language):
    expected, parsed = load(language)
    found = {(d.qualname, d.kind, d.start_line) for d in parsed.definitions}
    missing = [tuple(item) for item in expected["definitions"] if tuple(item) not in found]
    assert not missing, f"missing {missing}; found {sorted(found, key=lambda f: f[2])}"


@pytest.mark.parametrize("language", QUERY_LANGUAGES)
def test_references(language):
    expected, parsed = load(language)
    found = {(r.name, r.line) for r in parsed.references}
    missing = [tuple(item) for item in expected["references"] if tuple(item) not in found]
    assert not missing, f"missing {missing}; found {sorted(found, key=lambda f: f[1])}"


@pytest.mark.parametrize("language", [language for language in QUERY_LANGUAGES if "bases" in load(language)[0]])
def test_bases(language):
    """Languages whose fixture lists base classes capture exactly those as references of kind ``base``."""
    expected, parsed = load(language)
    found = sorted([r.name, r.line] for r in parsed.references if r.kind == "base")
    assert found == sorted(expected["bases"])


@pytest.mark.parametrize("language", QUERY_LANGUAGES)
def test_imports(language):
    expected, parsed = load(language)
    found = {(i.module, i.names) for i in parsed.imports}
    missing = [(m, tuple(sorted(n))) for m, n in expected["imports"] if (m, tuple(sorted(n))) not in found]
    assert not missing, f"missing {missing}; found {sorted(found)}"


@pytest.mark.parametrize("language", QUERY_LANGUAGES)
def test_chunks(language):
    expected, parsed = load(language)
    found = {(c.qualname, c.kind, c.start_line, c.end_line) for c in parsed.chunks}
    missing = [tuple(item) for item in expected["chunks"] if tuple(item) not in found]
    assert not missing, f"missing {missing}; found {sorted(found, key=lambda f: f[2])}"


def test_inherited_queries_include_the_parent_patterns():
    tsx = languages.query_source("tsx", "tags")
    assert languages.query_source("typescript", "tags") in tsx
    assert "jsx_opening_element" in tsx
    assert languages.query_source("tsx", "imports").startswith(languages.query_source("typescript", "imports"))
