"""What a warm language server adds at a cursor: the type of the receiver being typed, the callee being called.

Completion context is built from names (imports, the symbol index) because
that is fast and always there. A name does not say what ``limiter.`` is;
a type-aware server does, in a few milliseconds once it is warm. So when the
cursor's language has a ready server and the time budget allows, it is asked
for the type definition of the receiver before the cursor and the definition
of the call whose arguments are being typed, and those definitions join the
candidates, stated as the server's. A server that is starting, loading its
project, slow or failing adds nothing; it is never waited for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rag_lsp.completion.cursor import open_callee
from rag_lsp.langservers.client import ServerCallError, ServerUnavailable
from rag_lsp.langservers.composite import definition_at
from rag_lsp.langservers.pool import ServerPool
from rag_lsp.langservers.spec import language_id
from rag_lsp.model import Definition

# A server is not asked with less than this many seconds left; each call leaves this much for packing.
MIN_CALL_SECONDS = 0.01
MARGIN_SECONDS = 0.005
# ``limiter.al`` or ``self.limiter.`` before the cursor: the receiver is the last name before the dot.
_RECEIVER = re.compile(r"([A-Za-z_$][\w$]*)\s*\.\s*[A-Za-z_$]?[\w$]*$")


@dataclass(frozen=True, slots=True)
class Hint:
    """A definition a server resolved at the cursor, why (``the type of `limiter```), and which server."""

    definition: Definition
    why: str
    server: str


def cursor_hints(pool: ServerPool | None, definitions_in: Callable[[str], list[Definition]], rel: str, text: str,
                 prefix: str, language: str, line: int, character: int, seconds_left: Callable[[], float]
                 ) -> tuple[list[Hint], bool]:
    """Definitions a ready server gives for the cursor at ``line`` (1-based) and ``character`` (code points),
    and whether that is all it could give (False when a server that could answer later did not answer now:
    starting, loading, out of time, failed — an answer built without it must not be cached).

    ``text`` is the buffer's current text, sent to the server first, and ``prefix`` its cursor line up to
    the cursor (the caller has the lines already); ``definitions_in`` maps a result to the indexed
    definition that holds it.
    """
    client = pool.client_for(language) if pool is not None else None
    if client is None or isinstance(client, str):
        return [], True
    asks = _asks(prefix)
    if not asks:
        return [], True
    if client.state != "ready":
        # Completion is a need too: the server starts now and is warm for a later request.
        client.ensure_started()
        return [], client.state == "down"
    if client.warming or seconds_left() < MIN_CALL_SECONDS + MARGIN_SECONDS:
        return [], False
    hints: list[Hint] = []
    try:
        client.sync(rel, text, language_id(language, rel))
        for method, column, why in asks:
            left = seconds_left() - MARGIN_SECONDS
            if left < MIN_CALL_SECONDS:
                return hints, False
            for place in getattr(client, method)(rel, line, column, left):
                hints.append(Hint(definition_at(definitions_in(place.path), place), why, client.spec.name))
    except (ServerUnavailable, ServerCallError):
        # Whatever came back before the failure stands; the failure itself is the client's last error.
        return hints, False
    return hints, True


def _asks(prefix: str) -> list[tuple[str, int, str]]:
    """What to ask at the cursor: the receiver's type, and the definition of the innermost open call."""
    asks = []
    receiver = _RECEIVER.search(prefix)
    if receiver:
        asks.append(("type_definition", receiver.start(1), f"the type of `{receiver.group(1)}` at the cursor"))
    callee = open_callee(prefix)
    if callee:
        name, start = callee
        # ``mod.name(``: the server is asked at the last part, the function itself.
        column = start + len(name) - len(name.rsplit(".", 1)[-1])
        asks.append(("definition", column, f"the call `{name}(` being typed"))
    return asks
