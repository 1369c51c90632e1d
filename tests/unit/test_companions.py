"""A file's companions are told by name: declarations beside implementations, grammars beside generated code."""

import pytest
from conftest import write_tree

from rag_lsp.index.root_index import Index
from rag_lsp.index.tables import workspace_tables
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.retrieval.ranking.companions import companions, split_name
from rag_lsp.retrieval.ranking.config import DEFAULT_RANKING
from rag_lsp.retrieval.retrieve import retrieve

FILES = {
    # C: a header beside its source, a header in a parallel include tree, and a vendored copy elsewhere.
    "src/jv.c": "int jv_number(void) { return 1; }\n",
    "src/jv.h": "int jv_number(void);\n",
    "include/fmt/format.h": "int format(void);\n",
    "src/format.cc": "int format(void) { return 0; }\n",
    # Two headers of one name: the one sharing the source's folders is its companion.
    "lib/color/color.c": "int color(void) { return 0; }\n",
    "lib/color/color.h": "int color(void);\n",
    "tools/color.h": "int color(void);\n",
    # A grammar and the parser generated from it.
    "src/parser.y": "%token NUMBER\n%%\nexpr: NUMBER ;\n",
    "src/parser.c": "int yyparse(void) { return 0; }\n",
    # JavaScript and its declarations: a folder's index file, and a file beside its declaration.
    "src/plugin/utc/index.js": "export default function utc(option, Dayjs) { return Dayjs }\n",
    "types/plugin/utc.d.ts": "declare const plugin: PluginFunc\nexport = plugin\n",
    "types/index.d.ts": "export = dayjs\n",
    "src/index.js": "export default function dayjs() {}\n",
    "lib/util.js": "export function pad(value) { return value }\n",
    "lib/util.d.ts": "export function pad(value: string): string\n",
    # OCaml's implementation and interface.
    "lib/tree.ml": "let size t = List.length t\n",
    "lib/tree.mli": "val size : 'a list -> int\n",
    # Python and its stub; a file with no companion.
    "pkg/fast.py": "def fast():\n    return 1\n",
    "pkg/fast.pyi": "def fast() -> int: ...\n",
    "pkg/alone.py": "def alone():\n    return 2\n",
    # Swift extensions and C# partial classes, and their types' own files; a dotted name elsewhere is no part.
    "Sources/App/Application.swift": "public final class Application {}\n",
    "Sources/App/Sessions/Application+Sessions.swift": "extension Application { var sessions: Int { 0 } }\n",
    "Dapper/SqlMapper.cs": "public static partial class SqlMapper {}\n",
    "Dapper/SqlMapper.Async.cs": "public static partial class SqlMapper { }\n",
    "web/form.test.js": "test('form', () => {})\n",
    "web/form.js": "export function form() {}\n",
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    index = Index(write_tree(tmp_path_factory.mktemp("ws"), FILES), use_cache=False)
    index.refresh()
    return workspace_tables(index)


@pytest.mark.parametrize(("path", "expected"), [
    ("src/jv.c", ["src/jv.h"]),
    ("src/jv.h", ["src/jv.c"]),
    # A header in a parallel include tree; of two headers, the one sharing the source's folders.
    ("src/format.cc", ["include/fmt/format.h"]),
    ("include/fmt/format.h", ["src/format.cc"]),
    ("lib/color/color.c", ["lib/color/color.h"]),
    ("tools/color.h", ["lib/color/color.c"]),
    ("src/parser.y", ["src/parser.c"]),
    ("src/plugin/utc/index.js", ["types/plugin/utc.d.ts"]),
    ("types/plugin/utc.d.ts", ["src/plugin/utc/index.js"]),
    ("src/index.js", []),
    ("types/index.d.ts", []),
    ("lib/util.js", ["lib/util.d.ts"]),
    ("lib/util.d.ts", ["lib/util.js"]),
    ("pkg/fast.py", ["pkg/fast.pyi"]),
    ("lib/tree.mli", ["lib/tree.ml"]),
    ("pkg/alone.py", []),
    # An extension's companion is its type's file, not the other way round.
    ("Sources/App/Sessions/Application+Sessions.swift", ["Sources/App/Application.swift"]),
    ("Sources/App/Application.swift", []),
    ("Dapper/SqlMapper.Async.cs", ["Dapper/SqlMapper.cs"]),
    ("Dapper/SqlMapper.cs", []),
    ("web/form.test.js", []),
])
def test_companions_by_name(tables, path, expected):
    assert companions(tables, path) == expected


def test_split_name_keeps_declaration_extensions_whole():
    assert split_name("utc.d.ts") == ("utc", ".d.ts")
    assert split_name("index.js") == ("index", ".js")
    assert split_name("Makefile") == ("Makefile", "")
    assert split_name(".eslintrc") == (".eslintrc", "")


def test_a_strong_hits_companion_is_lifted_with_its_reason(tmp_path):
    # The source explains what the question asks; its header, like the other files, shares one word with it.
    files = {
        "src/ledger.c": "/* Posting an entry balances the accounts: each account's balance moves by the entry. */\n"
                        "int ledger_post(int entry) { return entry; }\n",
        "src/ledger.h": "int ledger_post(int entry);\n",
        **{f"src/counter{i}.c": f"/* Counter {i} of each entry. */\nint counter{i}(int entry) {{ return entry; }}\n"
           for i in range(6)},
    }
    index = Index(write_tree(tmp_path / "ws", files), use_cache=False)
    index.refresh()
    request = ContextRequest("how does posting an entry balance the accounts", top_k=10)
    on = retrieve(index, request, config=DEFAULT_RANKING)
    off = retrieve(index, request, config=DEFAULT_RANKING.without("companions"))
    paths_on = [item.path for item in on.items if item.source == "ranked"]
    paths_off = [item.path for item in off.items if item.source == "ranked"]
    assert paths_on[0] == paths_off[0] == "src/ledger.c"
    assert paths_on[1] == "src/ledger.h" and paths_off.index("src/ledger.h") > 1, (paths_on, paths_off)
    header = next(item for item in on.items if item.path == "src/ledger.h")
    assert "companion of src/ledger.c" in header.why


def test_of_two_strong_companions_a_question_lifts_only_the_weaker(tmp_path):
    # Both the source and its header answer the question; the source more. Lending both ways would count the
    # pair's evidence twice and lift both above the file the question names best after them.
    files = {
        "src/ledger.c": "/* Posting an entry balances the accounts: each account's balance moves. */\n"
                        "int ledger_post(int entry) { return entry; }\n",
        "src/ledger.h": "/* Posting an entry balances the accounts. */\nint ledger_post(int entry);\n",
        "src/journal.c": "/* Posting an entry to the journal balances nothing. */\nint journal(int entry) { return 0; }\n",
    }
    index = Index(write_tree(tmp_path / "ws", files), use_cache=False)
    index.refresh()
    answer = retrieve(index, ContextRequest("how does posting an entry balance the accounts", top_k=10),
                      config=DEFAULT_RANKING)
    why = {item.path: item.why for item in answer.items if item.source == "ranked"}
    assert "companion of src/ledger.c" in why["src/ledger.h"]
    assert not any(reason.startswith("companion of") for reason in why["src/ledger.c"])
    # A report's fix changes the pair together as often as not: there each lifts the other.
    # A report naming what each of the pair defines: both are strong.
    files["src/ledger.h"] = "#define LEDGER_LIMIT 10\nint ledger_post(int entry);\n"
    index = Index(write_tree(tmp_path / "report", files), use_cache=False)
    index.refresh()
    report = ("ledger_post does not balance the accounts past LEDGER_LIMIT. When I post an entry with ledger_post "
              "the balance of each account should move by the entry, but once LEDGER_LIMIT entries are posted the "
              "accounts no longer balance and the totals differ from the reports, which breaks our month end.")
    answer = retrieve(index, ContextRequest(report, top_k=10), config=DEFAULT_RANKING)
    why = {item.path: item.why for item in answer.items if item.source == "ranked"}
    assert "companion of src/ledger.c" in why["src/ledger.h"] and "companion of src/ledger.h" in why["src/ledger.c"]
