"""Code lenses above definitions: ``3 references · 1 test · context``, resolved one by one as they show.

A lens carries the file's URI and the definition's names in ``data``, enough
to resolve it after the index changed (or to say the definition is gone);
running one asks the context for that symbol.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from rag_lsp.features.lenses import UsageCounts, lens_definitions, usage_counts
from rag_lsp.server import ext
from rag_lsp.server.convert import line_range, uri_to_path
from rag_lsp.server.language_server import RagServer
from rag_lsp.server.params import field


def register(server: RagServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))
    async def code_lens(ls: RagServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        definitions = await ls.run(lens_definitions, ls.session, uri_to_path(params.text_document.uri))
        return [
            types.CodeLens(
                range=line_range(d.start_line, d.start_line),
                data={"uri": params.text_document.uri, "qualname": d.qualname, "name": d.name},
            )
            for d in definitions
        ]

    @server.feature(types.CODE_LENS_RESOLVE)
    async def resolve(ls: RagServer, lens: types.CodeLens) -> types.CodeLens:
        data = lens.data or {}
        uri, qualname, name = field(data, "uri"), field(data, "qualname"), field(data, "name")
        if not (isinstance(uri, str) and uri and isinstance(qualname, str) and qualname
                and isinstance(name, str) and name):
            raise JsonRpcInvalidParams("a code lens's data needs 'uri', 'qualname' and 'name'")
        counts = await ls.run(usage_counts, ls.session, uri_to_path(uri), name, qualname)
        lens.command = types.Command(
            title=_title(counts) if counts.found else f"{qualname} is no longer defined here",
            command=ext.COMMAND_CONTEXT_FOR_SYMBOL,
            arguments=[{"uri": uri, "qualname": qualname, "name": name}],
            tooltip=f"references counted by {counts.source}" if counts.found else None,
        )
        return lens


def _title(counts: UsageCounts) -> str:
    references, tests = counts.references, counts.tests
    return (f"{references} reference{'s' if references != 1 else ''} · "
            f"{tests} test{'s' if tests != 1 else ''} · context")
