"""pygls's JSON-RPC protocol, repaired so that every request gets exactly one response.

pygls decodes each message inside ``json.loads``'s object hook; when a
request's params do not fit the method's lsprotocol type (``{}`` for
``textDocument/definition``, a string for ``textDocument/codeLens``), the
exception escapes the read loop and the client waits forever. It also drops
requests that arrive after ``shutdown`` or with a wrong ``jsonrpc`` version.

Here the object hook leaves JSON as plain values and ``handle_message``
decodes the whole message itself, so a message that cannot be decoded is
answered with a JSON-RPC error that names the offending field (in the
client's camelCase spelling), a notification is logged and skipped, and
nothing a client sends can leave a request unanswered.
"""

from __future__ import annotations

import logging
import typing
from collections import abc
from functools import partial
from typing import Any

import cattrs
from cattrs.cols import list_structure_factory
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pygls.protocol.language_server import lsp_method

log = logging.getLogger("rag_lsp.server")

VERSION = "2.0"
# The longest description of a bad message kept in an error or a log line.
MAX_DETAIL_CHARS = 500


class Protocol(LanguageServerProtocol):
    """The language-server protocol with every request answered and bad notifications skipped."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        # cattrs reads a string where a list belongs as a list of characters and reports each one: 200,000
        # characters took the event loop half a minute. A list must be a list.
        converter.register_structure_hook_factory(_is_list, lambda hint: _list_only(hint, converter))

    def structure_message(self, data: dict[str, Any]) -> dict[str, Any]:
        # Called by ``json.loads`` for every object, innermost first; decoding waits for ``handle_message``,
        # which sees the whole message and can still answer it.
        return data

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            self._reject(None, JsonRpcInvalidRequest(
                f"a message must be a JSON object, got {type(message).__name__} (batches are not supported)"))
            return
        method, has_id, msg_id = message.get("method"), "id" in message, message.get("id")
        if has_id and not _valid_id(msg_id):
            self._reject(None, JsonRpcInvalidRequest(f"'id' must be an integer or a string, got {_show(msg_id)}"))
            return
        if message.get("jsonrpc") != VERSION:
            problem = f"'jsonrpc' must be \"{VERSION}\", got {_show(message.get('jsonrpc'))}"
            if has_id and method is not None:
                self._reject(msg_id, JsonRpcInvalidRequest(problem))
            else:
                log.warning("message skipped: %s", problem)
            return
        if method is None:
            self._handle_reply(message)
            return
        if not isinstance(method, str):
            problem = f"'method' must be a string, got {_show(method)}"
            if has_id:
                self._reject(msg_id, JsonRpcInvalidRequest(problem))
            else:
                log.warning("notification skipped: %s", problem)
            return
        if self._shutdown and method != types.EXIT:
            if has_id:
                self._reject(msg_id, JsonRpcInvalidRequest(f"{method}: the server is shutting down"))
            return
        if method == types.CANCEL_REQUEST and not has_id and not _valid_cancel(message.get("params")):
            # pygls looks the id up in a dict before any check: a list there would escape its read loop.
            log.warning("$/cancelRequest skipped: 'id' must be an integer or a string")
            return
        # JSON-RPC allows leaving out params (Neovim sends ragLsp/status that way); pygls needs the member.
        message = {**message, "params": message.get("params")}
        try:
            decoded = self._decode(method, message, has_id)
        except JsonRpcException as exc:
            if has_id:
                self._reject(msg_id, exc)
            else:
                log.warning("notification %s skipped: %s", method, exc.message)
            return
        if has_id and not hasattr(decoded, "id"):
            # A notification's method sent as a request: pygls would run it and answer nothing.
            self._reject(msg_id, JsonRpcInvalidRequest(f"{method} is a notification: it takes no 'id'"))
            return
        super().handle_message(decoded)

    def _decode(self, method: str, message: dict[str, Any], request: bool) -> Any:
        """The typed message; a JSON-RPC error naming what is wrong when it does not decode."""
        default = JsonRPCRequestMessage if request else JsonRPCNotification
        try:
            return self._converter.structure(message, self.get_message_type(method) or default)
        except Exception as exc:  # noqa: BLE001 - any failure to decode is the client's bad params.
            if request and not self._knows(method):
                raise JsonRpcMethodNotFound(f"method not found: {method}") from None
            raise JsonRpcInvalidParams(f"{method}: invalid params: {_problems(exc)}") from None

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: tuple[Any, ...] | None = None,
                         kwargs: dict[str, Any] | None = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args=args, kwargs=kwargs)
        # pygls keeps the future of every handler it runs under ``msg_id`` until it answers a request; a
        # notification (under a fresh uuid) and each step of a generator handler (pygls's own didChange and
        # didOpen) are never answered, so their futures stayed forever: about 2 KiB per keystroke.
        if not (isinstance(callback, partial) and callback.func == self._send_handler_result):
            future = self._request_futures.get(msg_id)
            if future is not None:
                future.add_done_callback(lambda _: self._request_futures.pop(msg_id, None))

    def _serialize_message(self, data: Any) -> Any:
        # The answer of a custom request (``ragLsp/context``) is JSON already (``wire.py``): sent as it is. cattrs
        # would copy it value by value first, a millisecond for a context answer on the event loop.
        if type(data) is JsonRPCResponseMessage and isinstance(data.result, dict):
            return {"id": data.id, "jsonrpc": data.jsonrpc, "result": data.result}
        return super()._serialize_message(data)

    def _knows(self, method: str) -> bool:
        return method in self.fm.features or method in self.fm.builtin_features

    def _handle_reply(self, message: dict[str, Any]) -> None:
        """A response to one of the server's own requests (a bad one is logged: nobody waits for an answer)."""
        try:
            decoded: Any = super().structure_message(message)
        except JsonRpcException as exc:
            log.warning("response skipped: %s", exc.message)
            return
        super().handle_message(decoded)

    def _reject(self, msg_id: Any, error: JsonRpcException) -> None:
        log.warning("request %s answered with an error: %s", _show(msg_id), error.message)
        if msg_id is None:
            # JSON-RPC requires ``"id": null`` when the id is unknown; pygls's encoder would leave it out.
            self._send_data({"jsonrpc": VERSION, "id": None,
                             "error": {"code": error.code, "message": error.message}})
        else:
            self._send_response(msg_id, error=error.to_response_error())

    @lsp_method(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def lsp_work_done_progress_cancel(self, params: types.WorkDoneProgressCancelParams):
        # A progress token is an integer or a string; pygls looks any other up in a dict (a list raises).
        if not _valid_id(params.token) or params.token is None:
            log.warning("progress cancel ignored: 'token' must be an integer or a string, got %s", _show(params.token))
            return
        yield from super().lsp_work_done_progress_cancel(params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params: types.DidChangeNotebookDocumentParams):
        if self._unknown_notebook(params.notebook_document.uri):
            return
        yield from super().lsp_notebook_document__did_change(params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def lsp_notebook_document__did_close(self, params: types.DidCloseNotebookDocumentParams):
        if self._unknown_notebook(params.notebook_document.uri):
            return
        yield from super().lsp_notebook_document__did_close(params)

    def _unknown_notebook(self, uri: str) -> bool:
        """pygls raises on a notebook that was never opened; rag_lsp keeps no notebook state, so it is logged."""
        if self.workspace.get_notebook_document(notebook_uri=uri) is None:
            log.warning("notebook notification ignored: notebook is not open: %s", uri)
            return True
        return False

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        # pygls raises on a change to a document that is not open; a stale client is not worth a crash report.
        if params.text_document.uri not in self.workspace.text_documents:
            log.warning("change ignored: document is not open: %s", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)


def _valid_id(value: object) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _is_list(hint: Any) -> bool:
    return typing.get_origin(hint) in (list, abc.Sequence, abc.MutableSequence)


def _list_only(hint: Any, converter: Any) -> Any:
    structure = list_structure_factory(hint, converter)

    def hook(value: object, _: object) -> list:
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        return structure(value, hint)

    return hook


def _valid_cancel(params: object) -> bool:
    return isinstance(params, dict) and _valid_id(params.get("id")) and params.get("id") is not None


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _problems(exc: Exception) -> str:
    """cattrs' description of what did not decode, with fields spelled as the client spells them."""
    if isinstance(exc, (cattrs.ClassValidationError, cattrs.IterableValidationError)):
        found = [_camel_path(problem) for problem in cattrs.transform_error(exc, path="")]
    else:
        found = [f"{type(exc).__name__}: {exc}"]
    text = "; ".join(found)
    return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 3] + "..."


def _camel_path(problem: str) -> str:
    """``required field missing @ .params.text_document`` → ``required field missing: params.textDocument``."""
    what, _, where = problem.rpartition(" @ ")
    if not what:
        return problem
    parts = [part.split("_")[0] + "".join(word.title() for word in part.split("_")[1:])
             for part in where.lstrip(".").split(".")]
    return f"{what}: {'.'.join(parts)}"
