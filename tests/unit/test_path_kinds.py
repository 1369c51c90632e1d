"""What kind of file a path is: the rules ranking and lenses share (``rag_lsp/path_kinds.py``)."""

import pytest

from rag_lsp.languages import language_for_path
from rag_lsp.path_kinds import (
    copy_family,
    is_barrel_path,
    is_code_path,
    is_prose_path,
    is_test_path,
    is_unknown_path,
    is_windows_path,
    older_version_folders,
    secondary_kind,
    vendored_folders,
)


@pytest.mark.parametrize(("path", "family"), [
    ("docs/content/manual/v1.5/manual.yml", "docs/content/manual/*/manual.yml"),
    ("docs/content/manual/v1.6/manual.yml", "docs/content/manual/*/manual.yml"),
    ("api/v2/handler.go", "api/*/handler.go"),
    ("docs/en/API-reference.md", "docs/*/API-reference.md"),
    ("docs/pt-br/API-reference.md", "docs/*/API-reference.md"),
    # A two-letter folder names a translation only among documents; plugin folders are not versions.
    ("lib/de/parser.rb", None),
    ("src/plugin/utc/index.js", None),
    ("src/index.js", None),
])
def test_versions_and_translations_of_a_file_are_one_family(path, family):
    assert copy_family(path) == family


@pytest.mark.parametrize(("path", "kind"), [
    ("types/index.d.ts", "declaration"),
    ("third_party/zlib/inflate.c", "vendored"),
    ("src/compat/py2.py", "compat"),
    ("src/ledger.py", None),
])
def test_copies_of_source_defined_elsewhere_say_what_they_are(path, kind):
    assert secondary_kind(path) == kind


def test_a_folder_with_its_own_licence_inside_the_source_is_a_vendored_library():
    paths = ["src/execute.c", "src/decNumber/ICU-license.html", "src/decNumber/decContext.c",
             "lib/a.rb", "lib/b/LICENSE-MIT", "lib/b/b.rb",
             # A monorepo's packages sit in a folder without code of its own; the root's licence is the project's.
             "packages/zod/LICENSE", "packages/zod/src/index.ts", "LICENSE", "setup.py",
             # Licences in documentation and tests, and a script that checks licences, say nothing of the kind.
             "docs/conf.py", "docs/x/COPYING", "tests/a.c", "tests/data/LICENSE.md", "src/tools/license-checks.sh"]
    code = {path.rpartition("/")[0] for path in paths if is_code_path(path) and not is_unknown_path(path)}
    assert vendored_folders(paths, code) == {"src/decNumber", "lib/b"}


def test_tests_and_barrels_are_told_apart_by_name():
    assert is_test_path("tests/test_ledger.py") and is_test_path("src/ledger.test.ts")
    assert not is_test_path("src/ledger.py")
    assert is_barrel_path("pkg/__init__.py") and not is_barrel_path("pkg/ledger.py")


@pytest.mark.parametrize(("path", "language"), [
    # A suffix the language table does not know says nothing about prose: a grammar, a jq library, a template.
    ("src/parser.y", "other"), ("src/builtin.jq", "other"), ("bin/release", "other"),
    # Extension-less names in capitals are documents, dotfiles are a tool's settings, build files are build files.
    ("README", "text"), ("LICENSE-MIT", "text"), ("notes.txt", "text"),
    (".gitignore", "ini"), (".editorconfig", "ini"),
    ("Makefile", "build"), ("cmake/FindZlib.cmake", "build"), ("Dockerfile", "build"),
    # A template the build fills in is the build's, unless it is a document's (a man page, a README).
    ("src/config.h.in", "build"), ("libjq.pc.in", "build"), ("Makefile.in", "build"),
    ("assets/manual/bat.1.in", "text"), ("README.md.in", "markdown"), ("NEWS.in", "text"),
])
def test_files_of_unknown_type_are_not_taken_for_prose(path, language):
    assert language_for_path(path) == language
    assert is_prose_path(path) == (language in {"text", "markdown"})
    assert is_unknown_path(path) == (language == "other")


@pytest.mark.parametrize(("path", "code"), [
    ("karma.sauce.conf.js", False), ("web/vite.config.ts", False), (".eslintrc.js", False), ("Gruntfile.js", False),
    ("src/config.js", True), ("src/app.config.service.ts", True), ("src/rc.js", True),
])
def test_javascript_that_configures_a_tool_is_settings_not_code(path, code):
    assert is_code_path(path) == code


@pytest.mark.parametrize(("path", "windows"), [
    ("src/win/fs.c", True), ("src/unix/fs.c", False), ("os/exec_windows.go", True), ("src/fs-win32.c", True),
    ("sys/windows/mod.rs", True), ("src/window.rs", False), ("lib/winston.js", False),
    # The extension is not a word of the name.
    ("docs/setup.win", False),
])
def test_code_for_windows_alone_is_told_by_its_folder_or_a_word_of_its_name(path, windows):
    assert is_windows_path(path) == windows


def test_a_major_version_folder_beside_a_later_one_is_older():
    paths = ["packages/zod/src/v3/types.ts", "packages/zod/src/v3/helpers/util.ts", "packages/zod/src/v4/core/api.ts",
             "packages/zod/src/v4-mini/index.ts",
             # A lone version folder (a Go module's ``v2/``) and versions in different parents are not.
             "v2/cobra.go", "api/v1/handler.go", "web/v2/app.go"]
    assert older_version_folders(paths) == {"packages/zod/src/v3"}
