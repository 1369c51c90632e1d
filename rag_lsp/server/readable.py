"""Typed answers as readable text: the blocks ``rag-lsp`` prints and the text part of an MCP tool result.

The JSON of the same answers is ``wire.py``'s; this is what a person (or a model reading its tool results)
reads. Nothing here imports pygls: the command line and the MCP server use it.
"""

from __future__ import annotations

from pathlib import Path

from rag_lsp.completion.snippets import CompletionAnswer
from rag_lsp.features.lookup import LookupAnswer
from rag_lsp.features.status import Status
from rag_lsp.index.index_records import IndexStats
from rag_lsp.retrieval.answer import ContextAnswer


def context_text(answer: ContextAnswer, absolute: bool = False) -> str:
    """Each place as ``rank. path:line (symbol) — why`` and its code, then a footer with the totals.

    ``absolute`` names places by absolute path (an agent reads files by absolute path; a person at a shell
    prefers the path relative to the root they named)."""
    blocks = []
    for rank, item in enumerate(answer.items, 1):
        path = str(Path(item.root) / item.path) if absolute and item.root else item.path
        symbol = f" ({item.qualname or item.symbol})" if item.symbol else ""
        blocks.append(f"{rank}. {path}:{item.focus_line or item.start_line}{symbol} — {'; '.join(item.why)}\n"
                      + "\n".join("    " + line for line in item.content.splitlines()))
    files = sum(summary.files for summary in answer.index)
    chunks = sum(summary.chunks for summary in answer.index)
    footer = (f"{len(answer.items)} places, {token_count(answer.tokens, answer.token_count)} of "
              f"{answer.budget_tokens}{', truncated' if answer.truncated else ''}; {answer.elapsed_ms:.1f} ms ranking"
              f" over {files} files / {chunks} chunks{_retrieval_note(answer)}")
    return "\n\n".join([*blocks, footer]) if blocks else "no matching places\n" + footer


def token_count(tokens: int, counter: str) -> str:
    """``~N tokens (estimated)``, or ``N tokens (cl100k)`` when a real tokenizer counted (the editors' renderers
    write the same)."""
    return f"~{tokens} tokens (estimated)" if counter == "estimate" else f"{tokens} tokens ({counter})"


def _retrieval_note(answer: ContextAnswer) -> str:
    """The retrieval mode, when an embedder is configured or the mode is not the plain lexical one."""
    report = answer.retrieval
    if report is None or (report.mode == "lexical" and all(root.status is None for root in report.roots)):
        return ""
    return f"; {report.mode}" + (f" ({report.reason})" if report.reason else "")


def index_stats_text(stats: IndexStats) -> str:
    """One root's index: counts, languages, skips, parse errors, cache and warnings."""
    lines = [
        (f"{stats.root}: {stats.files} files, {stats.chunks} chunks, {stats.definitions} definitions "
         f"in {stats.elapsed_ms / 1000:.2f} s ({stats.parsed} parsed, {stats.reused} from cache, "
         f"{stats.removed} removed)"),
        "  languages: " + (", ".join(f"{k} {v}" for k, v in sorted(stats.languages.items(),
                                                                   key=lambda kv: (-kv[1], kv[0]))) or "none"),
    ]
    if stats.skipped:
        lines.append("  skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.skipped.items())))
    if stats.parse_errors:
        lines.append(f"  parse errors: {stats.parse_errors} (e.g. {', '.join(stats.parse_error_examples)})")
    lines.append(f"  cache: {stats.cache or 'off'}")
    lines.extend(f"  warning: {w}" for w in stats.warnings)
    return "\n".join(lines)


def lookup_lines(answer: LookupAnswer, absolute: bool = False) -> list[str]:
    """One line per item, ``path:line qualname (kind) [source]``, with its hover text below it."""
    lines = []
    for item in answer.items:
        path = str(Path(item.root) / item.path) if absolute and item.root else item.path
        hover = f"\n    {item.hover}" if item.hover else ""
        lines.append(f"{path}:{item.start_line} {item.qualname} ({item.kind}) [{item.source}]{hover}")
    return lines


def lookup_text(answer: LookupAnswer, absolute: bool = False) -> str:
    """The items, then why nothing answered and which language servers were skipped, if so."""
    lines = lookup_lines(answer, absolute) or [f"no {answer.what} found for {answer.symbol or 'this file'}"]
    if answer.unanswered:
        lines.append(answer.unanswered)
    lines.extend(f"{note.server} skipped: {note.skipped}" for note in answer.language_servers if note.skipped)
    return "\n".join(lines)


def completion_text(answer: CompletionAnswer) -> str:
    """The prompt block, then a footer with its size and how long it took."""
    footer = (f"{len(answer.snippets)} snippets, ~{answer.tokens} tokens (estimated) of {answer.budget_tokens}"
              f"{', truncated' if answer.truncated else ''}; {answer.elapsed_ms:.1f} ms")
    return f"{answer.prompt or 'no context for this position'}\n\n{footer}"


def status_text(status: Status) -> str:
    """Every root's index and language servers, and the indexing progress."""
    blocks = [f"rag-lsp {status.version}: {status.files} files, {status.chunks} chunks"
              + (f"; indexing {status.indexing.done}/{status.indexing.total} files"
                 if status.indexing.running else "")]
    for root in status.roots:
        lines = [index_stats_text(root.stats)]
        lines.extend(f"  settings warning: {w}" for w in root.settings_warnings)
        for server in root.language_servers:
            error = f" ({server.last_error})" if server.last_error else ""
            lines.append(f"  language server {server.server} [{', '.join(server.languages)}]: {server.state}{error}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
