"""A file's companions: the declaration beside an implementation, the grammar beside the code made from it.

A change to what ``src/plugin/utc/index.js`` does often changes what
``types/plugin/utc.d.ts`` declares; a fix in ``jv.c`` often touches ``jv.h``;
a grammar change edits ``parser.y`` and the ``parser.c`` generated from it.
On the development sets' issues in eight languages, 26 of the 76 changed files
that have such a companion in their repository had it changed too. The
companion rarely shares the question's words the way its partner does (a
header declares, the source explains), so the ranking lends it part of its
partner's score (``pipeline._companion_bonus``).

A file that extends a type defined elsewhere is named for it: Swift's and
Objective-C's ``Application+Sessions.swift``, C#'s partial classes
``SqlMapper.Async.cs``. Its companion is the type's own file
(``Application.swift``, ``SqlMapper.cs``), which declares what the extensions
add to; the relation goes one way, as an extension's partner is its base.

Companions are told by name alone: the same stem (a folder's ``index`` file
takes the folder's name) and extensions of complementary kinds, below. Among
several files of that name the ones sharing the most folder names with the
file are kept (``include/fmt/format.h`` for ``src/format.cc``, not a vendored
copy's).
"""

from __future__ import annotations

from rag_lsp.index.tables import WorkspaceTables

# Groups of extensions whose files are companions of the files of the other group with the same stem.
COMPANION_KINDS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    # C, C++ and Objective-C sources and their headers.
    (frozenset({".c", ".cc", ".cpp", ".cxx", ".c++", ".m", ".mm"}),
     frozenset({".h", ".hh", ".hpp", ".hxx", ".h++"})),
    # JavaScript and its TypeScript declarations.
    (frozenset({".js", ".mjs", ".cjs", ".jsx"}), frozenset({".d.ts", ".d.mts", ".d.cts"})),
    # OCaml implementations and interfaces; Python and Cython modules and their stubs.
    (frozenset({".ml"}), frozenset({".mli"})),
    (frozenset({".py", ".pyx"}), frozenset({".pyi", ".pxd"})),
    # Yacc and lex grammars and the parser and scanner generated from them.
    (frozenset({".y", ".yy", ".l", ".ll"}), frozenset({".c", ".cc", ".cpp", ".h", ".hh", ".hpp"})),
)
# Extensions of two parts, tried before the last part alone.
_DOUBLE = (".d.ts", ".d.mts", ".d.cts")
# Extensions whose files may be a type's partial file, named ``Type.Part``: C#'s partial classes.
_PARTIAL_EXTENSIONS = frozenset({".cs"})
# A folder's file of this name stands for the folder (``utc/index.js`` is the module ``utc``).
_FOLDER_FILE = "index"
# Companions kept for one file, when several share the most folder names with it.
MAX_COMPANIONS = 2


def split_name(name: str) -> tuple[str, str]:
    """A file name's stem and extension, with the declaration files' double extensions kept whole."""
    for extension in _DOUBLE:
        if name.endswith(extension) and len(name) > len(extension):
            return name[: -len(extension)], extension
    stem, dot, extension = name.rpartition(".")
    return (stem, f".{extension}") if dot and stem else (name, "")


def companions(tables: WorkspaceTables, path: str) -> list[str]:
    """The indexed files that are ``path``'s companions, best first (ties by path), at most
    ``MAX_COMPANIONS``."""
    folder, _, name = path.rpartition("/")
    stem, extension = split_name(name)
    found: set[str] = set()
    for first, second in COMPANION_KINDS:
        for mine, theirs in ((first, second), (second, first)):
            if extension not in mine:
                continue
            for other_extension in theirs:
                if stem == _FOLDER_FILE:
                    # A folder's file: its companion beside it, or a file named for the folder (``utc.d.ts``).
                    found.update(candidate for candidate in tables.files_named(stem + other_extension)
                                 if candidate.rpartition("/")[0] == folder)
                    if folder:
                        found.update(tables.files_named(folder.rpartition("/")[2] + other_extension))
                else:
                    found.update(tables.files_named(stem + other_extension))
                    # The folder files of folders named for this stem (``utc.d.ts`` → ``utc/index.js``).
                    found.update(candidate for candidate in tables.files_named(_FOLDER_FILE + other_extension)
                                 if candidate.rpartition("/")[0].rpartition("/")[2] == stem)
    base = _extended(stem, extension)
    if base:
        found.update(tables.files_named(base + extension))
    found.discard(path)
    if not found:
        return []
    folders = set(folder.split("/")) if folder else set()
    shared = {candidate: len(folders.intersection(candidate.rpartition("/")[0].split("/"))) for candidate in found}
    best = max(shared.values())
    return sorted(candidate for candidate, count in shared.items() if count == best)[:MAX_COMPANIONS]


def _extended(stem: str, extension: str) -> str | None:
    """The type a file extends, by its name (``Application`` for ``Application+Sessions``, ``SqlMapper`` for
    the C# ``SqlMapper.Async``), or None."""
    if "+" in stem:
        return stem.partition("+")[0] or None
    if extension in _PARTIAL_EXTENSIONS and "." in stem:
        return stem.partition(".")[0] or None
    return None
