"""The MCP tools: their names, the descriptions an agent reads to decide when to call them, their input
schemas, and the decoding of a call's arguments into the typed requests the features take.

The bounds are ``server/arguments.py``'s (the language server's too), written into each schema and checked
again on every call: a client may skip schema validation, and a bad argument must come back as a tool error
that names the field, which the agent can correct. Nothing here knows the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as field_default
from pathlib import Path
from typing import Any

from rag_lsp.completion.engine import MAX_SNIPPETS, CompletionRequest
from rag_lsp.completion.snippets import DEFAULT_BUDGET_TOKENS as COMPLETION_BUDGET_TOKENS
from rag_lsp.retrieval.answer import DEFAULT_VERBOSITY, MODES, VERBOSITIES, ContextRequest
from rag_lsp.retrieval.bundle.templates import TASK_TYPES
from rag_lsp.retrieval.bundle.tokenizers import DEFAULT_TOKENIZER, TOKENIZERS
from rag_lsp.retrieval.enhance.knobs import KnobValue
from rag_lsp.server.arguments import (
    MAX_BUDGET_TOKENS,
    MAX_QUERY_CHARS,
    MAX_SYMBOL_CHARS,
    MAX_TOP_K,
    ArgumentError,
    enhancements,
    field,
    integer,
    known_files,
    one_of,
    optional_one_of,
    question,
    symbol_name,
)
from rag_lsp.workspace.settings import Settings

# What the text part of a result holds: the readable block (the JSON is in ``structuredContent`` either way),
# the JSON itself (for clients that show a model only the text), or, for ``context``, places without code.
FORMATS = ("text", "json")
CONTEXT_FORMATS = ("text", "json", "locations", "prompt")
# The language server's default (every field), so that the result is the ``ragLsp/context`` result; an agent
# that wants less asks for a lower rung.
CONTEXT_VERBOSITY = DEFAULT_VERBOSITY
# ``lookup``'s kinds as an agent names them; ``outline`` is the language server protocol's documentSymbols.
LOOKUP_KINDS = {"definitions": "definitions", "references": "references", "implementations": "implementations",
                "hover": "hover", "outline": "documentSymbols"}
# An agent asks for completion context rarely and not while typing: it may take longer than the editor's
# 50 ms, which is spent on cold caches the first time.
COMPLETION_TIME_BUDGET_MS = 1000
# Lines and columns beyond any real file, so that the engine (not a bound) says when a position is past the end.
MAX_POSITION = 10_000_000

Json = dict[str, Any]
# A file argument (an absolute path, a file: URI, or a path relative to a workspace root) → an absolute path
# inside a root; raises ArgumentError naming the field otherwise.
FileResolver = Callable[[str, object], Path]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: Json


def _format_schema(formats: tuple[str, ...], extra: str = "") -> Json:
    return {"type": "string", "enum": list(formats), "default": "text",
            "description": "What the text of the result holds: 'text' (default) a readable block, 'json' the "
                           "JSON (always in structuredContent too)" + extra + "."}


def _object(properties: Json, required: list[str]) -> Json:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_TOP_K = {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K,
          "description": "At most this many places (default 10, or topK in the workspace's .rag-lsp.toml)."}

TOOLS = (
    ToolSpec(
        "context", "Ranked code context for a question",
        "Finds the places in the workspace that matter for a question, a task or an error, ranked best first, "
        "each with the reasons it was chosen and its code, within a token budget. Call it before editing code "
        "you have not read: to find where a feature lives, which code a task or bug report is about, or where "
        "a stack trace, failing test, compiler error or log message points (put pasted output in 'evidence' "
        "and keep 'question' short). It combines definitions and references (from real language servers where "
        "installed), file paths, stack frames, test-to-implementation links and BM25 text search over an index "
        "that follows the files on disk. Prefer it to grep for questions in words; when you know the exact "
        "name of a symbol and want its definition or uses, call 'lookup'. Places are absolute path:line. "
        "Read-only.",
        _object({
            "question": {"type": "string", "maxLength": MAX_QUERY_CHARS,
                         "description": "The question, task or error in a sentence, e.g. 'why does Ledger.post "
                                        "raise KeyError'. Names written as in code help."},
            "evidence": {"type": "array", "items": {"type": "string"},
                         "description": "Pasted text that goes with the question: a stack trace, test output, "
                                        f"compiler errors. With the question, at most {MAX_QUERY_CHARS} "
                                        "characters."},
            "topK": _TOP_K,
            "budgetTokens": {"type": "integer", "minimum": 1, "maximum": MAX_BUDGET_TOKENS,
                             "description": "The places' code fits in about this many tokens (default 4000)."},
            "format": _format_schema(CONTEXT_FORMATS, ", 'locations' the places without their code, 'prompt' the "
                                     "places and the bundle as a block to put into a prompt (the same answer gives "
                                     "the same bytes)"),
            "taskType": {"type": "string", "enum": list(TASK_TYPES),
                         "description": "What the context is for; it decides what the bundle holds and in what "
                                        "order (debug: the failing code and its callers; review: code and tests; "
                                        "explain: docs and signatures; extend; locate). Default: classified from "
                                        "the question, and the answer says which and how sure."},
            "mode": {"type": "string", "enum": list(MODES), "default": "task",
                     "description": "'task' (default): the bundle the task type needs; 'ranked': the ranked places "
                                    "alone."},
            "verbosity": {"type": "string", "enum": list(VERBOSITIES), "default": CONTEXT_VERBOSITY,
                          "description": "What the JSON holds: 'minimal' the bundle and its sufficiency, 'standard' "
                                         "+ the query, mode and truncation, 'verbose' + each place's evidence, "
                                         "'diagnostic' (or 'full', the default) + timings and every strategy's "
                                         "report; 'locations' is 'full' without code."},
            "tokenizer": {"type": "string", "enum": list(TOKENIZERS), "default": DEFAULT_TOKENIZER,
                          "description": "How tokens are counted: 'cl100k', 'o200k', or 'estimate'."},
            "known": {"type": "object", "additionalProperties": {"type": "string"},
                      "description": "Files you already hold: path → git blob id of the text you read (as in "
                                     "an earlier answer's blob_id). Unchanged ones come back as one line; changed "
                                     "ones in full, flagged."},
            "enhancements": {
                "type": "object", "additionalProperties": False,
                "description": "Optional extra work for a hard question, each bounded by the workspace operator "
                               "(a value above the bound is lowered to it): 'expand' query variants, 'hyde' "
                               "hypothetical code documents searched like the question, 'rerank' the places. The "
                               "answer's 'retrieval' says what each cost. Leave it out normally.",
                "properties": {"expand": {"type": "integer", "minimum": 0},
                               "hyde": {"type": "integer", "minimum": 0},
                               "rerank": {"type": "boolean"}}},
        }, []),
    ),
    ToolSpec(
        "lookup", "Definitions, references, implementations, hover or outline of a symbol",
        "Answers one precise question about a named symbol: its definitions, its references (the places that "
        "use it), the implementations of an interface or abstract method, its hover text (signature, type and "
        "documentation), or the outline of a file (what='outline' with 'file'). Each item says which source "
        "answered it: a real language server (pyright, typescript-language-server, clangd, gopls, ...) or "
        "rag_lsp's tree-sitter patterns. Call it when you know the name, e.g. before changing a signature "
        "(references) or to find every class implementing an interface. For a question in words, call "
        "'context'. Read-only.",
        _object({
            "symbol": {"type": "string", "maxLength": MAX_SYMBOL_CHARS,
                       "description": "The name as written in code: 'post', 'Ledger.post', 'pkg.module.func'. "
                                      "Not needed for 'outline'."},
            "what": {"type": "string", "enum": list(LOOKUP_KINDS), "default": "definitions",
                     "description": "What to look up (default 'definitions')."},
            "file": {"type": "string",
                     "description": "For 'outline': the file, as an absolute path or relative to the workspace."},
            "format": _format_schema(FORMATS),
        }, []),
    ),
    ToolSpec(
        "completion_context", "Definitions the code at a position uses",
        "Lists the definitions that the code at one position of a file uses or is about to use, mostly from "
        "other files: imported functions and classes, the function whose call is open, the type of the "
        "receiver before a '.', the enclosing class and function, each with its signature and documentation, "
        f"packed into a small token budget ({COMPLETION_BUDGET_TOKENS} by default). Call it right before you "
        "write or change code at a specific line, to see the signatures available there without opening every "
        "imported file. The file is read from disk. For a question about the workspace as a whole, call "
        "'context'. Read-only.",
        _object({
            "file": {"type": "string",
                     "description": "The file, as an absolute path or relative to the workspace."},
            "line": {"type": "integer", "minimum": 1, "description": "The line, counted from 1."},
            "column": {"type": "integer", "minimum": 1,
                       "description": "The column in characters, counted from 1 (default 1)."},
            "budgetTokens": {"type": "integer", "minimum": 1, "maximum": MAX_BUDGET_TOKENS,
                             "description": f"The definitions fit in about this many tokens (default "
                                            f"{COMPLETION_BUDGET_TOKENS})."},
            "maxSnippets": {"type": "integer", "minimum": 1, "maximum": MAX_SNIPPETS,
                            "description": "At most this many definitions (default: as many as fit)."},
            "format": _format_schema(FORMATS),
        }, ["file", "line"]),
    ),
    ToolSpec(
        "status", "What rag_lsp has indexed",
        "Reports what rag_lsp has indexed for each workspace root (files, chunks, languages, files skipped and "
        "why), whether indexing is still running, how fresh the index is, and the state of each real language "
        "server. Call it when an answer misses a file you expected, to see whether it was skipped (ignored, "
        "too large, secret, ...) or not indexed yet. Read-only.",
        _object({"format": _format_schema(FORMATS)}, []),
    ),
)
TOOL_NAMES = tuple(tool.name for tool in TOOLS)


@dataclass(frozen=True, slots=True)
class ContextCall:
    request: ContextRequest
    format: str
    knobs: Mapping[str, KnobValue] = field_default(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LookupCall:
    symbol: str
    # The feature's kind (``documentSymbols`` for an outline).
    what: str
    path: Path | None
    format: str


@dataclass(frozen=True, slots=True)
class CompletionCall:
    request: CompletionRequest
    format: str


@dataclass(frozen=True, slots=True)
class StatusCall:
    format: str


ToolCall = ContextCall | LookupCall | CompletionCall | StatusCall


def decode(name: str, arguments: object, settings: Settings, resolve_file: FileResolver) -> ToolCall:
    """A tool call's arguments as a typed request; ArgumentError names the first bad one. ``name`` must be
    one of ``TOOL_NAMES``; ``settings`` give the defaults of the workspace."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ArgumentError(f"the arguments must be an object, got {type(arguments).__name__}")
    spec = next(tool for tool in TOOLS if tool.name == name)
    known = spec.input_schema["properties"]
    unknown = sorted(key for key in arguments if key not in known)
    if unknown:
        raise ArgumentError(f"unknown argument '{unknown[0]}'; {name} takes {', '.join(known)}")
    if name == "context":
        return _context(arguments, settings)
    if name == "lookup":
        return _lookup(arguments, resolve_file)
    if name == "completion_context":
        return _completion(arguments, resolve_file)
    return StatusCall(one_of(arguments, "format", FORMATS, "text"))


def _context(arguments: Json, settings: Settings) -> ContextCall:
    text, evidence = question(arguments, "question")
    if not text.strip() and not any(e.strip() for e in evidence):
        raise ArgumentError("give a 'question' (or 'evidence': a stack trace, test output, an error message)")
    request = ContextRequest(text, integer(arguments, "topK", settings.top_k, MAX_TOP_K),
                             integer(arguments, "budgetTokens", settings.budget_tokens, MAX_BUDGET_TOKENS), evidence,
                             task_type=optional_one_of(arguments, "taskType", TASK_TYPES),
                             mode=one_of(arguments, "mode", MODES, "task"),
                             verbosity=one_of(arguments, "verbosity", VERBOSITIES, CONTEXT_VERBOSITY),
                             tokenizer=one_of(arguments, "tokenizer", TOKENIZERS, DEFAULT_TOKENIZER),
                             known=known_files(arguments))
    return ContextCall(request, one_of(arguments, "format", CONTEXT_FORMATS, "text"), enhancements(arguments))


def _lookup(arguments: Json, resolve_file: FileResolver) -> LookupCall:
    kind = one_of(arguments, "what", tuple(LOOKUP_KINDS), "definitions")
    form = one_of(arguments, "format", FORMATS, "text")
    if kind == "outline":
        if field(arguments, "file") is None:
            raise ArgumentError("what='outline' needs 'file'")
        return LookupCall("", LOOKUP_KINDS[kind], resolve_file("file", field(arguments, "file")), form)
    return LookupCall(symbol_name(arguments), LOOKUP_KINDS[kind], None, form)


def _completion(arguments: Json, resolve_file: FileResolver) -> CompletionCall:
    if field(arguments, "file") is None or field(arguments, "line") is None:
        raise ArgumentError("completion_context needs 'file' and 'line'")
    path = resolve_file("file", field(arguments, "file"))
    line = integer(arguments, "line", 1, MAX_POSITION)
    column = integer(arguments, "column", 1, MAX_POSITION)
    max_snippets = integer(arguments, "maxSnippets", 0, MAX_SNIPPETS)
    request = CompletionRequest(path, line - 1, column - 1,
                                budget_tokens=integer(arguments, "budgetTokens", COMPLETION_BUDGET_TOKENS,
                                                      MAX_BUDGET_TOKENS),
                                max_snippets=max_snippets or None, time_budget_ms=COMPLETION_TIME_BUDGET_MS,
                                encoding="utf-32")
    return CompletionCall(request, one_of(arguments, "format", FORMATS, "text"))
