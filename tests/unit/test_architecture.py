"""Architecture invariants from docs/architecture.md that a test can hold.

The package is laid out by stage, in the order a question flows through it;
each stage may import only the stages above it in ``LAYERS``. These tests read
imports with ``ast`` (no module is executed except in the protocol-library
check), so they also hold for code that is rarely run.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import rag_lsp

PACKAGE = Path(rag_lsp.__file__).parent
REPO = PACKAGE.parent
ARCHITECTURE = REPO / "docs" / "architecture.md"
PROTOCOL_LIBRARIES = ("pygls", "lsprotocol")
# The stages in dependency order: each may import itself and the stages before it, never one after it.
# "(shared)" is the package's own top-level modules (records and per-language data) that every stage uses.
# ``mcp_server`` serves the same features as ``server`` to AI assistants; it comes after ``server`` only to use
# its pygls-free modules (wire, readable, arguments), and like every stage but ``server`` it must load no pygls.
LAYERS = ("(shared)", "index", "langservers", "retrieval", "workspace", "completion", "features", "server",
          "mcp_server", "cli")
# The only stage that may speak the protocol.
PROTOCOL_STAGE = "server"
MAX_MODULES_PER_FOLDER = 15
MAX_MODULE_LINES = 700


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def stage(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or (len(parts) == 2 and parts[1] not in LAYERS):
        return "(shared)" if parts[-1] != "cli" else "cli"
    return parts[1]


def imports_of(path: Path, module: str, known: set[str]) -> set[str]:
    """The package modules a module imports (``from a import b`` counts as ``a.b`` when that is a module);
    imports guarded by ``if TYPE_CHECKING:`` are left out, since they never run."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checking = {id(node) for guard in ast.walk(tree) if isinstance(guard, ast.If)
                and getattr(guard.test, "id", None) == "TYPE_CHECKING" for node in ast.walk(guard)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in checking:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: -node.level + (1 if path.name == "__init__.py" else 0) or None]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {name for name in found if name.split(".")[0] in ("rag_lsp", *PROTOCOL_LIBRARIES)}


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(path, name, known) for name, path in found.items()}


def test_only_the_server_imports_the_protocol_libraries():
    offenders = {name: sorted(i for i in imported if i.split(".")[0] in PROTOCOL_LIBRARIES)
                 for name, imported in import_graph().items() if stage(name) != PROTOCOL_STAGE}
    assert not {name: found for name, found in offenders.items() if found}


def test_importing_every_pure_stage_loads_no_protocol_library():
    pure = sorted(name for name in modules() if stage(name) not in (PROTOCOL_STAGE, "cli"))
    code = (f"import importlib, sys\nfor m in {pure!r}: importlib.import_module(m)\n"
            "print(sorted(n for n in sys.modules if n.split('.')[0] in ('pygls', 'lsprotocol')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_stages_import_only_the_stages_above_them():
    wrong = []
    for name, imported in sorted(import_graph().items()):
        for target in sorted(imported):
            if target.split(".")[0] != "rag_lsp" or target == "rag_lsp":
                continue
            if LAYERS.index(stage(target)) > LAYERS.index(stage(name)):
                wrong.append(f"{name} ({stage(name)}) imports {target} ({stage(target)})")
    assert not wrong


def test_the_module_import_graph_has_no_cycle():
    graph = {name: {t for t in targets if t in modules()} for name, targets in import_graph().items()}
    # A package's __init__ is imported by its modules implicitly; only explicit imports form cycles.
    state: dict[str, int] = defaultdict(int)
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            if state[target] == 1:
                cycles.append(" -> ".join([*path[path.index(target):], target]))
            elif state[target] == 0:
                visit(target, [*path, target])
        state[node] = 2

    for name in sorted(graph):
        if state[name] == 0:
            visit(name, [name])
    assert not cycles


def test_no_two_modules_share_a_name():
    by_name = defaultdict(list)
    for name, path in modules().items():
        if path.name != "__init__.py":
            by_name[path.stem].append(name)
    for name in (n for n, path in modules().items() if path.name == "__init__.py" and "." in n):
        by_name[name.rsplit(".", 1)[-1]].append(name)
    assert {stem: names for stem, names in by_name.items() if len(names) > 1} == {}


def test_folders_and_modules_stay_small():
    per_folder = defaultdict(list)
    for path in modules().values():
        if path.name != "__init__.py":
            per_folder[path.parent.relative_to(PACKAGE.parent).as_posix()].append(path.name)
    crowded = {folder: len(names) for folder, names in per_folder.items() if len(names) > MAX_MODULES_PER_FOLDER}
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert (crowded, long) == ({}, {})


def test_every_module_is_in_the_code_map():
    """docs/architecture.md names every module by its path below ``rag_lsp/`` (``index/walk.py``), every folder
    in the package, and every test file it cites exists."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    missing = [path.relative_to(PACKAGE).as_posix() for path in modules().values()
               if path.name != "__init__.py" and not _mapped(text, path.relative_to(PACKAGE))]
    assert missing == []
    folders = {path.parent.relative_to(PACKAGE).parts[0] for path in modules().values() if path.parent != PACKAGE}
    assert sorted(f for f in folders if f"## `rag_lsp/{f}/`" not in text) == []
    cited = set(re.findall(r"`(tests/[\w/]+\.py)(?:::\w+)?`", text))
    assert cited and sorted(c for c in cited if not (REPO / c).exists()) == []


def _mapped(text: str, module: Path) -> bool:
    """Whether the code map names a module: by its path below ``rag_lsp/``, or by its file name in the
    section of its folder or of a folder above it (``frames.py`` under ``rag_lsp/retrieval/``)."""
    if f"`{module.as_posix()}`" in text:
        return True
    folders = module.parent.parts
    return any(f"`{module.name}`" in _section_of(text, "/".join(folders[:depth]) or ".")
               for depth in range(len(folders), -1, -1))


def _section_of(text: str, folder: str) -> str:
    """The part of the code map headed by a folder (``## `rag_lsp/index/` ...``), where modules are named
    by file name alone."""
    heading = f"## `rag_lsp/{folder}/`" if folder != "." else "## `rag_lsp/`"
    start = text.find(heading)
    if start < 0:
        return ""
    end = text.find("\n## ", start + len(heading))
    return text[start: end if end > 0 else len(text)]


def test_every_query_directory_is_a_known_language():
    from rag_lsp import languages

    for directory in (PACKAGE / "queries").iterdir():
        if directory.is_dir() and not directory.name.startswith("_"):
            assert directory.name in languages.all_languages(), directory.name
            assert languages.spec(directory.name).has_grammar, directory.name
