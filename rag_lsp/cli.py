"""The ``rag-lsp`` command line: ``index``, ``context``, ``lookup``, ``completion-context``, ``serve`` and ``mcp``.

Exit codes (documented in README.md and docs/protocol.md):
0 the command ran (an answer may still be empty: warnings say why),
1 an unexpected internal error, 2 bad usage (argparse, a position outside the file, ``mcp`` without the
``mcp`` extra installed or without a root),
3 a root that does not exist or is not a directory,
4 an unreadable query file (or completion-context's --file).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import replace
from pathlib import Path

from rag_lsp import __version__
from rag_lsp.completion.snippets import DEFAULT_BUDGET_TOKENS as COMPLETION_BUDGET_TOKENS
from rag_lsp.features.context import answer_context
from rag_lsp.features.lookup import LOOKUPS, lookup
from rag_lsp.redaction import redact
from rag_lsp.retrieval.answer import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_TOP_K,
    DEFAULT_VERBOSITY,
    MODES,
    VERBOSITIES,
    ContextRequest,
)
from rag_lsp.retrieval.bundle.prompt_block import prompt_block
from rag_lsp.retrieval.bundle.templates import TASK_TYPES
from rag_lsp.retrieval.bundle.tokenizers import DEFAULT_TOKENIZER, TOKENIZERS
from rag_lsp.server import readable, wire
from rag_lsp.server.arguments import ArgumentError, known_files
from rag_lsp.workspace.session import Session

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_BAD_ROOT, EXIT_BAD_QUERY_FILE = 0, 1, 2, 3, 4
# A one-shot process starts with cold caches, so it gets more time than the server's 50 ms.
CLI_COMPLETION_TIME_BUDGET_MS = 1000
# How long a one-shot question waits for a language server to start (the editor's questions never wait).
SERVER_START_SECONDS = 15.0


class CliError(Exception):
    """A user-facing failure with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rag-lsp", description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--version", action="version", version=f"rag-lsp {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    commands = parser.add_subparsers(dest="command", required=True)

    cache = argparse.ArgumentParser(add_help=False)
    cache.add_argument("--cache-dir", type=Path, help="cache directory (default: $RAG_LSP_CACHE_DIR or the XDG cache home)")
    cache.add_argument("--no-cache", action="store_true", help="index in memory only")

    index = commands.add_parser("index", parents=[cache], help="build or refresh the index of one or more roots")
    index.add_argument("roots", nargs="+", type=Path, metavar="ROOT")
    index.add_argument("--json", action="store_true", help="print statistics as JSON")

    context = commands.add_parser("context", parents=[cache], help="print ranked context for a question")
    context.add_argument("query", nargs="?", help="the question; use --query-file for long text")
    context.add_argument("--root", type=Path, default=Path("."), help="workspace root (default: .)")
    context.add_argument("--query-file", type=Path, help="read the question from a file ('-' for stdin)")
    context.add_argument("--top-k", type=_positive, default=DEFAULT_TOP_K)
    context.add_argument("--budget-tokens", type=_positive, default=DEFAULT_BUDGET_TOKENS)
    context.add_argument("--json", action="store_true", help="print the JSON documented in docs/protocol.md"
                         " (the same as --format json)")
    context.add_argument("--format", choices=("text", "json", "prompt"), default=None,
                         help="text: places and code (default); json: the JSON; prompt: the prompt block")
    context.add_argument("--task-type", choices=TASK_TYPES, help="the kind of task (default: classified from the"
                         " question)")
    context.add_argument("--mode", choices=MODES, default="task",
                         help="task: the bundle the task type's template describes (default); ranked: the ranked"
                              " places alone")
    context.add_argument("--verbosity", choices=VERBOSITIES, default=DEFAULT_VERBOSITY,
                         help="what the answer holds (default: %(default)s)")
    context.add_argument("--tokenizer", choices=TOKENIZERS, default=DEFAULT_TOKENIZER,
                         help="how tokens are counted (default: %(default)s)")
    context.add_argument("--known", action="append", default=[], metavar="PATH=BLOB",
                         help="a file you already hold and the git blob id of its text (git hash-object PATH);"
                              " repeat for several")
    context.add_argument("--language-servers", action="store_true",
                         help="also ask the real language servers on PATH (started for this question, then stopped)")
    context.add_argument("--expand", type=int, metavar="N",
                         help="query variants (the expand enhancement; bounded by the operator's max)")
    context.add_argument("--hyde", type=int, metavar="N", help="hypothetical documents (needs a language model)")
    context.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                         help="rerank the places (signals, and a language model when configured)")
    context.add_argument("--wait-vectors", type=float, default=0.0, metavar="SECONDS",
                         help="wait up to this long for the chunks' vectors before asking (default 0: a cold "
                              "cache answers lexically and says so)")

    lookup = commands.add_parser("lookup", parents=[cache],
                                 help="definitions, references, implementations or hover text of a symbol")
    lookup.add_argument("symbol", nargs="?", default="", help="the symbol, e.g. Ledger.post")
    lookup.add_argument("--root", type=Path, default=Path("."), help="workspace root (default: .)")
    lookup.add_argument("--what", choices=LOOKUPS, default="definitions", help="what to look up (default: %(default)s)")
    lookup.add_argument("--file", type=Path, help="the file whose outline documentSymbols gives")
    lookup.add_argument("--no-language-servers", action="store_true", help="answer from the patterns only")
    lookup.add_argument("--json", action="store_true", help="print the JSON documented in docs/protocol.md")

    completion = commands.add_parser("completion-context", parents=[cache],
                                     help="print the context an LLM needs to complete code at a position")
    completion.add_argument("--root", type=Path, default=Path("."), help="workspace root (default: .)")
    completion.add_argument("--file", type=Path, required=True, help="the file being edited (read from disk)")
    completion.add_argument("--line", type=_positive, required=True, help="1-based line of the cursor")
    completion.add_argument("--column", type=_positive, default=1,
                            help="1-based column of the cursor, in characters (default: 1, the line's start)")
    completion.add_argument("--budget-tokens", type=_positive, default=COMPLETION_BUDGET_TOKENS)
    completion.add_argument("--max-snippets", type=_positive, help="at most this many snippets")
    completion.add_argument("--time-budget-ms", type=_positive, default=CLI_COMPLETION_TIME_BUDGET_MS,
                            help="stop ranking after this long (default: %(default)s; the server uses 50 ms,"
                                 " with caches kept warm between requests)")
    completion.add_argument("--json", action="store_true", help="print the JSON documented in docs/protocol.md")

    serve = commands.add_parser("serve", parents=[cache], help="run the language server (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead (for debugging)")
    serve.add_argument("--log-file", type=Path, help="log file (default: $RAG_LSP_LOG_FILE or <cache>/server.log)")

    mcp = commands.add_parser("mcp", parents=[cache],
                              help="run the MCP server for AI assistants (stdio by default; needs rag-lsp[mcp])")
    mcp.add_argument("--root", type=Path, action="append",
                     help="a workspace root; repeat for several (default: the current directory)")
    mcp.add_argument("--http", metavar="HOST:PORT",
                     help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (loopback hosts only)")
    mcp.add_argument("--no-language-servers", action="store_true",
                     help="answer from the patterns only (by default the servers on PATH start on first need)")
    mcp.add_argument("--poll", action="store_true",
                     help="poll the disk every 2 s instead of asking the operating system for file events")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="rag-lsp: %(message)s")
    try:
        if args.command == "index":
            return _index(args)
        if args.command == "serve":
            return _serve(args)
        if args.command == "completion-context":
            return _completion_context(args)
        if args.command == "lookup":
            return _lookup(args)
        if args.command == "mcp":
            return _mcp(args)
        return _context(args)
    except CliError as exc:
        print(f"rag-lsp: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130


def _session(args: argparse.Namespace, roots: list[Path], language_servers: bool = False,
             wait_for_servers: float = 0.0) -> Session:
    """The same workspace the language server keeps, over ``roots``: their operator files' settings apply."""
    _check_roots(roots)
    session = Session(cache_root=args.cache_dir, use_cache=not args.no_cache, language_servers=language_servers,
                      wait_for_servers=wait_for_servers)
    for root in roots:
        for warning in session.add_root(root):
            print(f"rag-lsp: {warning}", file=sys.stderr)
    return session


def _check_roots(roots: list[Path]) -> None:
    for root in roots:
        if not root.exists():
            raise CliError(f"root does not exist: {root}", EXIT_BAD_ROOT)
        if not root.is_dir():
            raise CliError(f"root is not a directory: {root}", EXIT_BAD_ROOT)


def _index(args: argparse.Namespace) -> int:
    session = _session(args, args.roots)
    try:
        reports = session.index_roots()
    finally:
        session.close()
    if args.json:
        encoded = [wire.index_stats_json(r) for r in reports]
        print(json.dumps(encoded if len(encoded) > 1 else encoded[0], indent=2))
    else:
        for report in reports:
            print(readable.index_stats_text(report))
    return EXIT_OK


def _read_query(args: argparse.Namespace) -> str:
    parts = [args.query] if args.query else []
    if args.query_file:
        try:
            text = sys.stdin.read() if str(args.query_file) == "-" else args.query_file.read_text("utf-8", "replace")
        except OSError as exc:
            raise CliError(f"cannot read query file {args.query_file}: {exc.strerror or exc}", EXIT_BAD_QUERY_FILE) from exc
        parts.append(text)
    if not parts:
        raise CliError("give a QUERY or --query-file", EXIT_USAGE)
    return "\n".join(parts)


def _known(values: list[str]) -> tuple[tuple[str, str], ...]:
    """``--known PATH=BLOB`` options as the request's pairs (a relative path is the root's)."""
    try:
        known = known_files({"--known": dict(value.rsplit("=", 1) for value in values)}, "--known")
    except (ArgumentError, ValueError) as exc:
        raise CliError(str(exc) if isinstance(exc, ArgumentError) else "--known takes PATH=BLOB", EXIT_USAGE) from None
    return known


def _context(args: argparse.Namespace) -> int:
    query = _read_query(args)
    request = ContextRequest(query, args.top_k, args.budget_tokens, task_type=args.task_type, mode=args.mode,
                             verbosity=args.verbosity, tokenizer=args.tokenizer, known=_known(args.known))
    form = args.format or ("json" if args.json else "text")
    session = _session(args, [args.root], language_servers=args.language_servers)
    try:
        (stats,) = session.index_roots()
        if args.language_servers:
            # Started and loaded before the question, so that ranking (3 s at most) never waits for them.
            session.warm_servers(SERVER_START_SECONDS)
        if args.wait_vectors > 0:
            session.wait_for_vectors(args.wait_vectors)
        knobs = {name: value for name, value in (("expand", args.expand), ("hyde", args.hyde),
                                                 ("rerank", args.rerank)) if value is not None}
        answer = answer_context(session, request, knobs=knobs)
    finally:
        session.close()
    summary = replace(answer.index[0], skipped=stats.skipped, parse_errors=stats.parse_errors,
                      indexing_ms=round(stats.elapsed_ms, 1))
    answer = replace(answer, index=(summary,))
    for warning in answer.warnings:
        print(f"rag-lsp: {warning}", file=sys.stderr)
    if form == "json":
        print(json.dumps(wire.context_json(answer), indent=2, ensure_ascii=False))
    elif form == "prompt":
        sys.stdout.write(redact(prompt_block(answer)))
    else:
        print(redact(readable.context_text(answer)))
    return EXIT_OK


def _lookup(args: argparse.Namespace) -> int:
    _check_roots([args.root])
    if args.what == "documentSymbols" and not args.file:
        raise CliError("documentSymbols needs --file", EXIT_USAGE)
    if args.what != "documentSymbols" and not args.symbol.strip():
        raise CliError("give a SYMBOL to look up", EXIT_USAGE)
    session = _session(args, [args.root], language_servers=not args.no_language_servers,
                       wait_for_servers=SERVER_START_SECONDS)
    try:
        session.index_roots()
        path = (args.file if args.file.is_absolute() else Path.cwd() / args.file).resolve() if args.file else None
        answer = lookup(session, args.symbol.strip(), args.what, path)
    finally:
        session.close()
    if args.json:
        print(json.dumps(wire.lookup_json(answer), indent=2, ensure_ascii=False))
        return EXIT_OK
    for line in readable.lookup_lines(answer):
        print(redact(line))
    if answer.unanswered:
        print(f"rag-lsp: {answer.unanswered}", file=sys.stderr)
    for note in answer.language_servers:
        if note.skipped:
            print(f"rag-lsp: {note.server} skipped: {note.skipped}", file=sys.stderr)
    return EXIT_OK


def _completion_context(args: argparse.Namespace) -> int:
    # Imported here so that the other commands never pay for it.
    from rag_lsp.completion.engine import CompletionEngine, CompletionError, CompletionRequest, PositionError

    path = args.file if args.file.is_absolute() else Path.cwd() / args.file
    session = _session(args, [args.root])
    if not path.is_file():
        session.close()
        raise CliError(f"cannot read {args.file}: not a file", EXIT_BAD_QUERY_FILE)
    try:
        session.index_roots()
        request = CompletionRequest(path.resolve(), args.line - 1, args.column - 1, budget_tokens=args.budget_tokens,
                                    max_snippets=args.max_snippets, time_budget_ms=args.time_budget_ms)
        answer = CompletionEngine(session).context(request)
    except PositionError as exc:
        raise CliError(f"bad position: {exc}", EXIT_USAGE) from None
    except CompletionError as exc:
        raise CliError(str(exc), EXIT_BAD_QUERY_FILE) from None
    finally:
        session.close()
    for warning in answer.warnings:
        print(f"rag-lsp: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(wire.completion_json(answer), indent=2, ensure_ascii=False))
    else:
        print(redact(answer.prompt) or "no context for this position")
        print(f"{len(answer.snippets)} snippets, ~{answer.tokens} tokens (estimated) of {answer.budget_tokens}"
              f"{', truncated' if answer.truncated else ''}; {answer.elapsed_ms:.1f} ms", file=sys.stderr)
    return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    # Imported here so that index/context never pay for loading pygls.
    from rag_lsp.server.app import build_server
    from rag_lsp.server.logs import configure

    server = build_server(cache_root=args.cache_dir, use_cache=not args.no_cache)
    configure(server, args.log_file, logging.DEBUG if args.verbose else logging.INFO)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            raise CliError(f"--tcp needs HOST:PORT, got {args.tcp!r}", EXIT_USAGE)
        server.start_tcp(host, int(port))
    else:
        server.start_io()
    # A client that closes the pipe without a shutdown request still gets the language servers stopped.
    server.session.close()
    return EXIT_OK


def _mcp(args: argparse.Namespace) -> int:
    try:
        # Imported here: the SDK is an optional extra, and the other commands never pay for loading it.
        from rag_lsp.mcp_server.endpoint import LOOPBACK_HOSTS, run
    except ImportError as exc:
        raise CliError(f"the MCP server needs the mcp extra: pip install 'rag-lsp[mcp]' ({exc})", EXIT_USAGE) from None
    roots = args.root or [Path.cwd()]
    if not args.root and Path.cwd().resolve() in (Path("/"), Path.home().resolve()):
        # Clients that start servers from / or the home directory would have us index the whole disk.
        raise CliError(f"the current directory is {Path.cwd()}: give the project with --root", EXIT_USAGE)
    _check_roots(roots)
    http = None
    if args.http:
        host, _, port = args.http.rpartition(":")
        host = host.strip("[]")
        if host not in LOOPBACK_HOSTS or not port.isdigit():
            raise CliError(f"--http needs HOST:PORT with a loopback host ({', '.join(LOOPBACK_HOSTS)}), "
                           f"got {args.http!r}", EXIT_USAGE)
        http = (host, int(port))
    run(roots, args.cache_dir, not args.no_cache, not args.no_language_servers, args.poll, http)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
