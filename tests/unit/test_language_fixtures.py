"""Every language with tree-sitter queries or declaration patterns yields the known symbols of its fixture.

A fixture is ``tests/fixtures/languages/<language>/`` holding one source file
and ``expected.json``: definitions as ``[qualname, kind, start_line]``,
references as ``[name, line]``, imports as ``[module, [names]]`` and chunks as
``[qualname, kind, start_line, end_line]``. For query languages each listed
item must be found and the parser may find more; the declaration patterns
(languages without a grammar, no references or imports) must find exactly
the listed definitions, since their risk is matching what is no declaration.
"""

import json
import re
from importlib import resources
from pathlib import Path

import pytest
from tree_sitter import Query

from rag_lsp import languages
from rag_lsp.index.parsing.declarations import all_rules
from rag_lsp.index.parsing.parse import parse_file, parse_tree

FIXTURES = Path(__file__).parent.parent / "fixtures" / "languages"
QUERY_DIRS = [entry for entry in resources.files("rag_lsp").joinpath("queries").iterdir() if entry.is_dir()]
# Directories named ``_<fragment>`` hold patterns that languages inherit; they are not languages.
QUERY_LANGUAGES = sorted(entry.name for entry in QUERY_DIRS if not entry.name.startswith("_"))
FRAGMENTS = sorted(entry.name for entry in QUERY_DIRS if entry.name.startswith("_"))
REQUIRED = {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "ruby"}
DECLARATION_LANGUAGES = sorted(all_rules())
DECLARATIONS_REQUIRED = {"swift", "kotlin", "php", "csharp", "scala", "lua", "elixir", "haskell", "zig", "shell"}
FIXTURE_LANGUAGES = QUERY_LANGUAGES + DECLARATION_LANGUAGES


def load(language: str):
    expected = json.loads((FIXTURES / language / "expected.json").read_text())
    source = (FIXTURES / language / expected["file"]).read_text()
    parsed = parse_file(expected["file"], source)
    return expected, parsed


def test_required_languages_have_queries():
    assert REQUIRED <= set(QUERY_LANGUAGES)


def test_required_languages_have_declaration_patterns():
    assert DECLARATIONS_REQUIRED <= set(DECLARATION_LANGUAGES)
    for language in DECLARATION_LANGUAGES:
        assert languages.spec(language).chunker == "declarations", language


@pytest.mark.parametrize("language", FIXTURE_LANGUAGES)
def test_every_language_with_patterns_has_a_fixture(language):
    assert (FIXTURES / language / "expected.json").is_file(), f"no fixture for {language}"


def compiled(language: str, kind: str) -> Query | None:
    """One kind of a language's queries compiled alone (the parse compiles the two kinds as one)."""
    source = languages.query_source(language, kind)
    return Query(languages.ts_language(language), source) if source is not None else None


@pytest.mark.parametrize("language", QUERY_LANGUAGES)
def test_queries_compile(language):
    for kind in languages.QUERY_KINDS:
        if languages.query_source(language, kind) is not None:
            assert compiled(language, kind) is not None


@pytest.mark.parametrize("language", QUERY_LANGUAGES)
def test_one_query_for_tags_and_imports_matches_what_each_query_matches(language):
    """The parse runs both kinds as one query (``extraction_query``) and tells them apart by pattern number."""
    expected = json.loads((FIXTURES / language / "expected.json").read_text())
    root = parse_tree(language, (FIXTURES / language / expected["file"]).read_bytes()).root_node

    def found(query, offset=0):
        return [(index + offset, {name: [(n.start_byte, n.end_byte) for n in nodes] for name, nodes in caps.items()})
                for index, caps in languages.query_matches(query, root)]

    tags, imports = compiled(language, "tags"), compiled(language, "imports")
    combined, tag_patterns = languages.extraction_query(language)
    assert tag_patterns == (tags.pattern_count if tags else 0)
    together = found(combined)
    assert [match for match in together if match[0] < tag_patterns] == (found(tags) if tags else [])
    assert [match for match in together if match[0] >= tag_patterns] == (found(imports, tag_patterns) if imports else [])
    assert together, "the fixture matches nothing"


@pytest.mark.parametrize("language", FIXTURE_LANGUAGES)
def test_fixture_detected_as_language(language):
    _expected, parsed = load(language)
    assert parsed.language == language
    assert parsed.error is None


@pytest.mark.parametrize("language", FIXTURE_LANGUAGES)
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


@pytest.mark.parametrize("language", FIXTURE_LANGUAGES)
def test_chunks(language):
    expected, parsed = load(language)
    found = {(c.qualname, c.kind, c.start_line, c.end_line) for c in parsed.chunks}
    missing = [tuple(item) for item in expected["chunks"] if tuple(item) not in found]
    assert not missing, f"missing {missing}; found {sorted(found, key=lambda f: f[2])}"


@pytest.mark.parametrize("language", DECLARATION_LANGUAGES)
def test_declaration_patterns_find_nothing_else(language):
    expected, parsed = load(language)
    found = sorted((d.qualname, d.kind, d.start_line) for d in parsed.definitions)
    assert found == sorted(tuple(item) for item in expected["definitions"])


@pytest.mark.parametrize("language", DECLARATION_LANGUAGES)
def test_every_declaration_pattern_matches_its_fixture(language):
    """A pattern no line of the fixture declares with is untested: a wrong one would go unnoticed."""
    expected = json.loads((FIXTURES / language / "expected.json").read_text())
    rules = all_rules()[language]
    lines = (FIXTURES / language / expected["file"]).read_text().splitlines()
    used = {id(found.pattern) for line in lines if (found := rules.declaration(line.strip()))}
    unused = [pattern.regex.pattern for pattern in rules.patterns if id(pattern) not in used]
    assert not unused, f"patterns without a declaration in the fixture: {unused}"


def test_inherited_queries_include_the_parent_patterns():
    tsx = languages.query_source("tsx", "tags")
    assert languages.query_source("typescript", "tags") in tsx
    assert "jsx_opening_element" in tsx
    assert languages.query_source("tsx", "imports").startswith(languages.query_source("typescript", "imports"))


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_every_fragment_is_inherited_and_is_no_language(fragment):
    """A fragment is compiled only through the languages that inherit it, so one nobody inherits is untested."""
    inheriting = [
        language for language in QUERY_LANGUAGES for kind in languages.QUERY_KINDS
        if (source := languages.query_source(language, kind)) and _inherited(source, fragment)
    ]
    assert inheriting, f"no language inherits {fragment}"
    assert fragment not in languages.all_languages()


def _inherited(source: str, fragment: str) -> bool:
    return any(
        line.startswith("; inherits:") and fragment in [n.strip() for n in line.split(":", 1)[1].split(",")]
        for line in source.splitlines()
    )


def test_fragments_are_written_once():
    """JavaScript and TypeScript share the ECMAScript patterns, JavaScript and TSX the JSX ones, C and C++ theirs."""
    shared = {"_ecmascript": ["javascript", "typescript", "tsx"], "_jsx": ["javascript", "tsx"],
              "_c_family": ["c", "cpp"]}
    for fragment, users in shared.items():
        text = languages.query_source(fragment, "tags")
        for language in QUERY_LANGUAGES:
            assert (text in languages.query_source(language, "tags")) == (language in users), (fragment, language)


# Languages whose fixture exercises every tags pattern (the ones that share fragments), so a shared pattern
# that a grammar parses differently shows up as a pattern matching nothing.
EVERY_PATTERN_COVERED = ["javascript", "typescript", "c", "cpp"]


@pytest.mark.parametrize("language", EVERY_PATTERN_COVERED)
def test_every_tags_pattern_matches_its_fixture(language):
    expected = json.loads((FIXTURES / language / "expected.json").read_text())
    tree = parse_tree(language, (FIXTURES / language / expected["file"]).read_bytes())
    query = compiled(language, "tags")
    assert query is not None
    matched = {index for index, _ in languages.query_matches(query, tree.root_node)}
    source = languages.query_source(language, "tags").encode()
    unmatched = [source[query.start_byte_for_pattern(i):].split(b"\n\n")[0].decode()
                 for i in range(query.pattern_count) if i not in matched]
    assert not unmatched, "patterns without a match in the fixture:\n" + "\n\n".join(unmatched)


BUILTIN_PREDICATES = {"eq?", "not-eq?", "match?", "not-match?", "any-of?", "not-any-of?"}


@pytest.mark.parametrize("directory", sorted(QUERY_LANGUAGES + FRAGMENTS))
def test_queries_use_only_known_predicates(directory):
    """tree-sitter ignores a predicate it does not know: a misspelt one would match everything."""
    known = BUILTIN_PREDICATES | set(languages.QUERY_PREDICATES)
    for kind in languages.QUERY_KINDS:
        resource = resources.files("rag_lsp").joinpath(f"queries/{directory}/{kind}.scm")
        if resource.is_file():
            used = set(re.findall(r"\(#([a-z-]+[?!])", resource.read_text("utf-8")))
            assert used <= known, f"{directory}/{kind}.scm: unknown {used - known}"


def _names(language: str, query_text: str, source: bytes) -> list[str]:
    tree = parse_tree(language, source)
    query = Query(languages.ts_language(language), query_text)
    return sorted(node.text.decode() for _, caps in languages.query_matches(query, tree.root_node)
                  for node in caps.get("name", []))


def test_kind_eq_keeps_the_listed_node_types_and_may_name_types_a_grammar_lacks():
    source = b"const a = 1, b = f(), c = 'x', d = () => 1;"
    query = '((variable_declarator name: (identifier) @name value: (_) @_v) (#kind-eq? @_v "number" "string" "as_expression"))'
    assert _names("javascript", query, source) == ["a", "c"]


def test_has_parent_looks_at_the_direct_parent_only():
    source = b"const top = 1;\nexport const out = 2;\nfunction f() { const inner = 3; }\n"
    query = '((lexical_declaration (variable_declarator name: (identifier) @name)) @d (#has-parent? @d "program" "export_statement"))'
    assert _names("javascript", query, source) == ["out", "top"]


def test_an_unknown_predicate_matches_nothing():
    query = '((identifier) @name (#kind-equals? @name "identifier"))'
    assert _names("javascript", query, b"const a = b;") == []
