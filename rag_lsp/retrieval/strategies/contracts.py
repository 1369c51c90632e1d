"""An HTTP route in the message → its API contract, then the handlers that register it.

"``GET /api/v1/orders/{id}`` returns 500" names an endpoint, and an endpoint
is defined twice: in a contract (OpenAPI/Swagger YAML or JSON, a protobuf
``google.api.http`` option, a GraphQL schema) and where a router registers
its handler. Route templates differ between frameworks (``{id}``, ``:id``,
``<int:id>``, ``[id]``), and a handler often registers only the tail of the
path under a mounted prefix, so routes are matched by segments, parameters
matching any parameter syntax, and a tail match counts less.
"""

from __future__ import annotations

import re
from dataclasses import replace

from rag_lsp.languages import language_for_path
from rag_lsp.retrieval.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext, specificity

NAME = "contracts"
_CONTRACT_LANGUAGES = frozenset({"yaml", "json", "protobuf", "graphql"})
_ROUTE = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(/[\w\-./{}:<>\[\]]*)")
# A written segment that is a value (``42``, a UUID, ``{id}``), standing for a parameter.
_VALUE_SEGMENT = re.compile(r"^(\d+|[0-9a-f]{8}-[0-9a-f-]{27}|[{:<\[].*)$", re.IGNORECASE)
_PARAMETER = r"(?:\{[^}/]+\}|:\w+|<[^>/]+>|\[[^\]/]+\]|\*\w*|[^/\s\"'`]+)"
# A method not mentioned in the chunk that registers the path.
OTHER_METHOD_FACTOR = 0.7


def run(ctx: StrategyContext) -> list[Finding]:
    routes = list(dict.fromkeys(_ROUTE.findall(ctx.query.text)))
    if not routes:
        raise Skipped("no HTTP route in the message")
    findings = []
    for method, path in routes:
        tails = _tails(path)
        if not tails:
            continue
        patterns = [(share, _pattern(parts)) for share, parts in tails]
        # Every tail holds the route's last fixed segment, so only chunks containing it are read.
        last_fixed = next(part for part in reversed(tails[0][1]) if not _VALUE_SEGMENT.match(part))
        found = []
        for chunk_id, chunk in ctx.chunks_containing(last_fixed):
            share = max((share for share, pattern in patterns if pattern.search(chunk.content)), default=0.0)
            if not share:
                continue
            contract = language_for_path(chunk.path) in _CONTRACT_LANGUAGES
            says_method = re.search(rf"\b{method}\b", chunk.content, re.IGNORECASE) is not None
            weight = RELIABILITY["route"] * share * (1.0 if says_method else OTHER_METHOD_FACTOR)
            verb = "defines" if contract else "registers"
            found.append(Finding(path=chunk.path, strategy=NAME, anchor=f"{method} {path}", weight=weight,
                                 reason=f"{verb} route {method} {path}", chunk_id=chunk_id, in_prose=True))
        spread = specificity(len({f.path for f in found}))
        findings.extend(replace(f, weight=f.weight * spread) for f in found)
    return findings


def _tails(path: str) -> list[tuple[float, list[str]]]:
    """The route's segments, then its shorter tails with the share of the path they keep.

    A tail made only of parameters would match any path, so it is left out.
    """
    parts = [part for part in path.split("/") if part]
    return [((len(parts) - start) / len(parts), parts[start:]) for start in range(len(parts))
            if not all(_VALUE_SEGMENT.match(part) for part in parts[start:])]


def _pattern(parts: list[str]) -> re.Pattern:
    """A regex for the route as quoted in code or a contract, any parameter syntax matching a parameter."""
    pieces = [_PARAMETER if _VALUE_SEGMENT.match(part) else re.escape(part) for part in parts]
    return re.compile(r"(?<![\w-])/?" + "/".join(pieces) + r"/?(?=[\"'`:\s?)]|$)", re.MULTILINE)

