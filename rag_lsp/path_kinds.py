"""What kind of file a workspace path is: a test, an example, prose, or code.

Ranking demotes tests, examples and prose unless the question is about them,
and lens counts tell tests apart, so every part of the core asks the same
functions here.
"""

from __future__ import annotations

import re

from rag_lsp.languages import language_for_path

TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "testdata", "test_data",
                        "fixtures", "__mocks__", "e2e"})
_TEST_NAME = re.compile(
    r"^(test_.*\.py|.*_test\.(py|go|rs|cc|cpp|c)|conftest\.py|.*\.(test|spec)\.[cm]?[jt]sx?"
    r"|.*(Test|Tests|Spec|IT)\.(java|kt|scala|cs|swift|php)|.*_spec\.rb|.*_test\.exs?)$"
)
_EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos", "bench", "benchmark",
                           "benchmarks", "benches", "asv_bench"})
# Code under these directories illustrates the product (Sphinx configuration, doc snippets) rather than being it.
_DOC_DIRS = frozenset({"doc", "docs", "documentation"})
_PROSE_LANGUAGES = frozenset({"markdown", "text"})
# Languages that hold data, settings or markup rather than code that raises messages.
_NON_CODE_LANGUAGES = _PROSE_LANGUAGES | {"yaml", "toml", "json", "ini", "html", "css", "sql"}


def is_test_path(path: str) -> bool:
    """Tests and test data, by directory or by the naming conventions of the common test runners."""
    parts = path.split("/")
    return _TEST_NAME.match(parts[-1]) is not None or any(part.lower() in TEST_DIRS for part in parts[:-1])


def is_example_path(path: str) -> bool:
    """Examples, samples and benchmarks, and code inside documentation directories."""
    directories = [part.lower() for part in path.split("/")[:-1]]
    return any(part in _EXAMPLE_DIRS for part in directories) or (
        any(part in _DOC_DIRS for part in directories) and not is_prose_path(path))


def is_prose_path(path: str) -> bool:
    return language_for_path(path) in _PROSE_LANGUAGES


def is_code_path(path: str) -> bool:
    """Source code in any language, as opposed to prose, settings, data and markup."""
    return language_for_path(path) not in _NON_CODE_LANGUAGES


def is_primary_path(path: str) -> bool:
    """Source proper: not a test, an example or prose, which often repeat what the source defines."""
    return not (is_test_path(path) or is_example_path(path) or is_prose_path(path))
