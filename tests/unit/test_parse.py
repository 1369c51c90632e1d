"""The parser's contracts: blob ids, chunk shape, splitting, fallbacks, and never raising."""

import itertools
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp import languages
from rag_lsp.index.parsing import chunk as chunk_module
from rag_lsp.index.parsing.parse import blob_id, parse_file

PARSED_LANGUAGES = languages.parsed_languages()
EXTENSION = {name: languages.spec(name).extensions[0] for name in PARSED_LANGUAGES}


def test_blob_id_equals_git_hash_object(tmp_path):
    path = tmp_path / "x.py"
    data = "def f():\n    return 'é'\n".encode()
    path.write_bytes(data)
    expected = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True)
    assert blob_id(data) == expected.stdout.strip()
    assert parse_file("x.py", data.decode()).blob_id == expected.stdout.strip()


def test_chunk_records_every_field():
    source = "import os\n\n\ndef area(r):\n    return 3.14 * r * r\n"
    parsed = parse_file("geo/shapes.py", source)
    function = next(c for c in parsed.chunks if c.symbol == "area")
    assert (function.path, function.start_line, function.end_line) == ("geo/shapes.py", 4, 5)
    assert (function.kind, function.qualname, function.language) == ("function", "area", "python")
    assert source.encode()[function.start_byte : function.end_byte].decode().rstrip("\n") == function.content
    assert function.blob_id == blob_id(source.encode())


def test_byte_ranges_count_utf8_bytes():
    source = "NAME = 'héllo wörld 🎉'\n\n\ndef greet():\n    return NAME\n"
    function = next(c for c in parse_file("g.py", source).chunks if c.symbol == "greet")
    assert source.encode()[function.start_byte : function.end_byte].decode().startswith("def greet")


def test_large_definition_is_split_with_signature_repeated():
    body = "".join(f"    total += value_{i} * {i}\n" for i in range(400))
    source = f"def accumulate(values):\n    total = 0\n{body}    return total\n"
    pieces = [c for c in parse_file("big.py", source).chunks if c.symbol == "accumulate"]
    assert len(pieces) > 2
    assert all(len(p.content) <= chunk_module.MAX_CHUNK_CHARS + 200 for p in pieces)
    assert pieces[0].content.startswith("def accumulate(values):")
    for piece in pieces[1:]:
        assert piece.content.startswith("def accumulate(values):\n# ...\n")
    # The pieces cover the definition's lines without gaps or overlaps.
    assert pieces[0].start_line == 1 and pieces[-1].end_line == 403
    for before, after in itertools.pairwise(pieces):
        assert after.start_line == before.end_line + 1


def test_markdown_is_chunked_by_headings():
    text = "intro\n\n# Install\n\npip install x\n\n```\n# not a heading\n```\n\n## Rate limiting\n\nSet LIMIT.\n"
    parsed = parse_file("docs/guide.md", text)
    sections = [(c.symbol, c.start_line) for c in parsed.chunks]
    assert sections == [(None, 1), ("Install", 3), ("Rate limiting", 11)]
    assert all(c.kind in ("section", "text") for c in parsed.chunks)


def test_config_files_are_chunked_by_line_windows():
    text = "".join(f"key_{i}: {i}\n" for i in range(100))
    parsed = parse_file("config/app.yaml", text)
    assert parsed.language == "yaml"
    assert [(c.start_line, c.end_line) for c in parsed.chunks] == [(1, 40), (41, 80), (81, 100)]


def test_a_failing_grammar_falls_back_to_line_windows(monkeypatch):
    def broken(language):
        raise RuntimeError("query exploded")

    monkeypatch.setattr(languages, "extraction_query", broken)
    parsed = parse_file("a.py", "def f():\n    return 1\n")
    assert parsed.error == "RuntimeError: query exploded"
    assert [(c.start_line, c.end_line, c.kind) for c in parsed.chunks] == [(1, 2, "text")]
    assert parsed.definitions == []


@pytest.mark.parametrize("language", PARSED_LANGUAGES)
def test_broken_source_never_raises(language):
    source = "}{ class def fn ( [ < \x00 \"unterminated\n" * 20 + "\n\n)))\n"
    parsed = parse_file(f"broken{EXTENSION[language]}", source)
    assert parsed.language == language
    assert parsed.chunks


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400),
       language=st.sampled_from(PARSED_LANGUAGES + ["markdown", "yaml"]))
def test_parse_never_raises_and_chunks_stay_in_bounds(text, language):
    extension = EXTENSION.get(language) or languages.spec(language).extensions[0]
    parsed = parse_file(f"f{extension}", text)
    line_count = len(text.splitlines())
    encoded = text.encode()
    for c in parsed.chunks:
        assert 1 <= c.start_line <= c.end_line <= max(line_count, 1)
        assert 0 <= c.start_byte <= c.end_byte <= len(encoded)
