"""Typed answers to the JSON documented in docs/protocol.md: the one place the wire format is made.

The language server and the command line both encode here, so a field is
added or renamed in one place and ``tests/integration/test_protocol_doc.py``
checks it against the document. Nothing here imports pygls: the command line
uses it without loading the protocol stack, and the server passes the one
protocol-specific thing, how a path becomes a URI, as ``uri``.

Every answer leaves through ``redact_json``: indexed text is masked when it is
indexed, but an answer also carries text that never went through the index
(a language server's hover, an open buffer's similar code, a status example),
and no secret may leave in any of it (``rag_lsp/redaction.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from rag_lsp.completion.snippets import CompletionAnswer
from rag_lsp.features.lenses import UsageCounts
from rag_lsp.features.lookup import LookupAnswer
from rag_lsp.features.status import Status
from rag_lsp.index.index_records import IndexStats
from rag_lsp.index.symbol_provider import ServerNote
from rag_lsp.index.vectors.embedding import VectorStatus
from rag_lsp.langservers.spec import ServerStatus
from rag_lsp.redaction import redact_json
from rag_lsp.retrieval.answer import LADDER, ContextAnswer, ContextItem, IndexSummary, verbosity_level
from rag_lsp.retrieval.bundle.prompt_block import prompt_block
from rag_lsp.retrieval.bundle.relations import Relation
from rag_lsp.retrieval.enhance.enhance_report import RetrievalReport
from rag_lsp.retrieval.enhance.retrieval_config import RetrievalSettings
from rag_lsp.retrieval.ranking.config import ranking_to_settings
from rag_lsp.workspace.settings import Settings, camel_case

Json = dict[str, Any]
# How a file becomes a URI: the server's (pygls's) conversion.
ToUri = Callable[[Path], str]
STANDARD, VERBOSE, DIAGNOSTIC = (LADDER.index(name) for name in ("standard", "verbose", "diagnostic"))


def context_json(answer: ContextAnswer, uri: ToUri | None = None, content: bool = True, prompt: bool = False) -> Json:
    """``rag-lsp context --json``; with ``uri`` (the server) each item also names its root and URI; without
    ``content`` (or at verbosity ``locations``) items carry no text; with ``prompt`` the answer's prompt block
    is added.

    The answer's verbosity chooses the fields, each rung adding to the one before: ``minimal`` the bundle
    (places, relationship lists, provenance), its task, sections, sufficiency and token counts; ``standard``
    the query, the mode and truncation; ``verbose`` the evidence of each place (score, reasons, strategies,
    sources, context-window marks); ``diagnostic`` (= ``full``, the default) the timings, the index and every
    strategy's and language server's report."""
    level = verbosity_level(answer.verbosity)
    content = content and answer.verbosity != "locations"
    result: Json = {"items": [_item(item, uri, content, level) for item in answer.items]}
    if level >= DIAGNOSTIC:
        result["elapsed_ms"] = answer.elapsed_ms
    if level >= STANDARD:
        result["truncated"] = answer.truncated
    if level >= DIAGNOSTIC:
        result["index"] = _index(answer.index)
    if level >= STANDARD:
        result["query"] = {"terms": list(answer.terms), "names": list(answer.names)}
    result.update(tokens=answer.tokens, budget_tokens=answer.budget_tokens, token_count=answer.token_count)
    if level >= DIAGNOSTIC:
        result.update(
            strategies_run=list(answer.strategies_run),
            strategies_skipped=[{"strategy": name, "reason": reason} for name, reason in answer.strategies_skipped],
            language_servers=[server_note_json(note) for note in answer.language_servers],
        )
    task: Json = {"type": answer.task.task_type, "confidence": answer.task.confidence, "source": answer.task.source}
    if level >= DIAGNOSTIC:
        task["scores"] = dict(answer.task.scores)
    result["task"] = task
    if level >= STANDARD:
        result["mode"] = answer.mode
    result.update(
        sections=[{"name": s.name, "tokens": s.tokens, "cap": s.cap, "entries": s.entries, "omitted": s.omitted}
                  for s in answer.sections],
        sufficiency=answer.sufficiency,
        checkouts=[{"root": c.root, "commit": c.commit, "branch": c.branch, "moved_from": c.moved_from}
                   for c in answer.checkouts],
        answered_at=answer.answered_at,
    )
    if answer.warnings:
        result["warnings"] = list(answer.warnings)
    if answer.indexing is not None:
        result["indexing"] = {"done": answer.indexing.done, "total": answer.indexing.total}
    if answer.retrieval is not None:
        result["retrieval"] = retrieval_json(answer.retrieval)
    if prompt:
        result["prompt"] = prompt_block(answer)
    return redact_json(result)


def retrieval_json(report: RetrievalReport) -> Json:
    """The dense side and the enhancement knobs of one answer (issue 13)."""
    return {
        "mode": report.mode,
        "reason": report.reason,
        "dense_ms": report.dense_ms,
        "roots": [{"root": root.root, "used": root.used, "reason": root.reason,
                   "vectors": vector_status_json(root.status) if root.status is not None else None}
                  for root in report.roots],
        "enhancements": {knob.name: {"value": knob.value, "requested": knob.requested, "source": knob.source,
                                     "max": knob.max, "method": knob.method, "variants": knob.variants,
                                     "passes": knob.passes, "model_calls": knob.model_calls, "ms": knob.ms,
                                     "degraded": knob.degraded}
                         for knob in report.knobs},
    }


def vector_status_json(status: VectorStatus) -> Json:
    return {"backend": status.backend, "state": status.state, "embedded": status.embedded, "chunks": status.chunks,
            "search": status.search, "error": status.error, "chunks_per_second": status.chunks_per_second,
            "memory_bytes": status.memory_bytes}


def _item(item: ContextItem, uri: ToUri | None, content: bool, level: int) -> Json:
    encoded: Json = {
        "path": item.path,
        "start_line": item.start_line,
        "end_line": item.end_line,
        "focus_line": item.focus_line or item.start_line,
        "symbol": item.symbol,
        "qualname": item.qualname,
        "kind": item.kind,
        "language": item.language,
    }
    if level >= VERBOSE:
        encoded.update(score=item.score, why=list(item.why), strategies=list(item.strategies),
                       sources=list(item.sources))
    if content:
        encoded["content"] = item.content
    encoded["tokens"] = item.tokens
    if level >= VERBOSE:
        encoded.update(source=item.source, mergedFrom=[list(span) for span in item.merged_from],
                       dedupedFrom=[list(span) for span in item.deduped_from], fileCapped=item.file_capped)
    encoded.update(
        section=item.section,
        shown=item.shown,
        blob_id=item.blob_id,
        commit=item.commit,
        known=item.known,
        callers=[_relation(r) for r in item.callers],
        callers_total=item.callers_total,
        callees=[_relation(r) for r in item.callees],
        callees_total=item.callees_total,
    )
    if uri is not None:
        encoded.update(root=item.root, uri=uri(Path(item.root) / item.path))
    return encoded


def _relation(relation: Relation) -> Json:
    return {"qualname": relation.qualname, "kind": relation.kind, "path": relation.path, "line": relation.line,
            "source": relation.source}


def _index(summaries: tuple[IndexSummary, ...]) -> Json:
    """One root's index as an object; several roots as their list with the totals."""
    if len(summaries) == 1:
        return _summary(summaries[0])
    return {"roots": [_summary(s) for s in summaries], "files": sum(s.files for s in summaries),
            "chunks": sum(s.chunks for s in summaries)}


def _summary(summary: IndexSummary) -> Json:
    encoded: Json = {"root": summary.root, "files": summary.files, "chunks": summary.chunks}
    if summary.skipped is not None:
        encoded.update(skipped=dict(sorted(summary.skipped.items())), parse_errors=summary.parse_errors,
                       indexing_ms=summary.indexing_ms)
    return encoded


def server_note_json(note: ServerNote) -> Json:
    return {"server": note.server, "languages": list(note.languages), "state": note.state, "calls": note.calls,
            "answered": note.answered, "remembered": note.remembered, "skipped": note.skipped}


def server_status_json(status: ServerStatus) -> Json:
    return {"server": status.server, "command": status.command, "languages": list(status.languages),
            "state": status.state, "version": status.version, "pid": status.pid, "restarts": status.restarts,
            "last_error": status.last_error}


def lookup_json(answer: LookupAnswer, uri: ToUri | None = None) -> Json:
    items = []
    for item in answer.items:
        encoded: Json = {"path": item.path, "start_line": item.start_line, "end_line": item.end_line,
                         "name": item.name, "qualname": item.qualname, "kind": item.kind, "source": item.source}
        if item.hover is not None:
            encoded["hover"] = item.hover
        encoded["root"] = item.root
        if uri is not None:
            encoded["uri"] = uri(Path(item.root) / item.path)
        items.append(encoded)
    result: Json = {"symbol": answer.symbol, "what": answer.what, "items": items,
                    "language_servers": [server_note_json(note) for note in answer.language_servers]}
    if answer.unanswered is not None:
        result["unanswered"] = answer.unanswered
    return redact_json(result)


def index_stats_json(stats: IndexStats) -> Json:
    """``rag-lsp index --json``: one root's statistics after a refresh."""
    return redact_json({
        "root": stats.root,
        "files": stats.files,
        "chunks": stats.chunks,
        "definitions": stats.definitions,
        "languages": dict(sorted(stats.languages.items())),
        "skipped": dict(sorted(stats.skipped.items())),
        "skip_examples": dict(sorted(stats.skip_examples.items())),
        "parse_errors": stats.parse_errors,
        "parse_error_examples": stats.parse_error_examples,
        "parsed": stats.parsed,
        "reused": stats.reused,
        "removed": stats.removed,
        "elapsed_ms": round(stats.elapsed_ms, 1),
        "truncated": stats.truncated,
        "cache": stats.cache,
        "warnings": stats.warnings,
    })


def settings_json(settings: Settings) -> Json:
    """The settings in force, keyed as editors write them (camelCase)."""
    return {
        "budgetTokens": settings.budget_tokens,
        "topK": settings.top_k,
        "ignore": list(settings.ignore),
        "languages": dict(settings.languages),
        "cacheDir": settings.cache_dir,
        "maxFileBytes": settings.max_file_bytes,
        "maxIndexFiles": settings.max_index_files,
        "maxIndexBytes": settings.max_index_bytes,
        "maxIndexSeconds": settings.max_index_seconds,
        "languageServers": {language: {camel_case(key): value for key, value in server.items()}
                            for language, server in settings.language_servers.items()},
        "languageServerTimeoutMs": settings.language_server_timeout_ms,
        "languageServerCalls": settings.language_server_calls,
        "languageServerBudgetMs": settings.language_server_budget_ms,
        "ranking": ranking_to_settings(settings.ranking),
        "firstIndexWaitMs": settings.first_index_wait_ms,
        "retrieval": _retrieval_settings_json(settings.retrieval),
        "enhancements": dict(settings.enhancements),
    }


def _retrieval_settings_json(retrieval: RetrievalSettings) -> Json:
    def camel(record: object) -> Json:
        return {camel_case(f.name): getattr(record, f.name) for f in fields(record)}  # type: ignore[arg-type]

    return {"dense": camel(retrieval.dense), "fusion": camel(retrieval.fusion),
            "llm": camel(retrieval.llm) if retrieval.llm is not None else None,
            "enhancements": {name: {"default": limit.default, "max": limit.max} for name, limit in retrieval.limits}}


def status_json(status: Status) -> Json:
    roots = []
    for root in status.roots:
        encoded = index_stats_json(root.stats)
        encoded["settings"] = settings_json(root.settings)
        encoded["settings_warnings"] = list(root.settings_warnings)
        encoded["language_servers"] = [server_status_json(server) for server in root.language_servers]
        encoded["vectors"] = vector_status_json(root.vectors) if root.vectors is not None else None
        roots.append(encoded)
    return redact_json({
        "version": status.version,
        "roots": roots,
        "files": status.files,
        "chunks": status.chunks,
        "open_documents": status.open_documents,
        "indexing": {"done": status.indexing.done, "total": status.indexing.total,
                     "running": status.indexing.running, "state": status.indexing.state},
        "language_servers": [server_status_json(server) for server in status.language_servers],
    })


def usage_json(counts: UsageCounts) -> Json:
    return {"references": counts.references, "tests": counts.tests, "found": counts.found,
            "start_line": counts.start_line, "source": counts.source}


def completion_json(answer: CompletionAnswer, uri: ToUri | None = None) -> Json:
    """``ragLsp/completionContext`` and ``rag-lsp completion-context --json``."""
    snippets = []
    for snippet in answer.snippets:
        location = uri(Path(answer.root) / snippet.path) if uri is not None and answer.root else \
            (Path(answer.root) / snippet.path).as_uri() if answer.root else None
        snippets.append({
            "uri": location,
            "path": snippet.path,
            "start_line": snippet.start_line,
            "end_line": snippet.end_line,
            "symbol": snippet.symbol,
            "qualname": snippet.qualname,
            "kind": snippet.kind,
            "language": snippet.language,
            "source": snippet.source,
            "score": snippet.score,
            "why": list(snippet.why),
            "content": snippet.content,
            "tokens": snippet.tokens,
        })
    result: Json = {
        "root": answer.root,
        "snippets": snippets,
        "prompt": answer.prompt,
        "tokens": answer.tokens,
        "budget_tokens": answer.budget_tokens,
        "omitted": answer.omitted,
        "truncated": answer.truncated,
        "token_count": answer.token_count,
        "elapsed_ms": answer.elapsed_ms,
        "cached": answer.cached,
    }
    if answer.warnings:
        result["warnings"] = list(answer.warnings)
    return redact_json(result)
