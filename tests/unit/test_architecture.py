"""Architecture invariants from docs/architecture.md that a test can hold."""

import ast
import subprocess
import sys
from pathlib import Path

import rag_lsp

PACKAGE = Path(rag_lsp.__file__).parent
FORBIDDEN_IN_CORE = ("pygls", "lsprotocol")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_core_never_imports_the_protocol_libraries():
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN_IN_CORE)
        for path in sorted((PACKAGE / "core").rglob("*.py"))
    }
    assert not {k: v for k, v in offenders.items() if v}


def test_importing_the_core_loads_no_protocol_library():
    code = (
        "import sys, pkgutil, importlib, rag_lsp.core as core\n"
        "for m in pkgutil.walk_packages(core.__path__, 'rag_lsp.core.'): importlib.import_module(m.name)\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] in ('pygls', 'lsprotocol')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_query_directory_is_a_known_language():
    from rag_lsp import languages

    for directory in (PACKAGE / "queries").iterdir():
        if directory.name.startswith("_"):
            continue  # A fragment that languages inherit (tests/unit/test_language_fixtures.py checks them).
        assert directory.name in languages.all_languages(), directory.name
        assert languages.spec(directory.name).has_grammar, directory.name
