"""An answer as a prompt block: the ranked places with their reasons, then the bundle, section by section.

An assistant puts this block into its prompt, often in a cached prefix that is reused while it stays the same
bytes. So the block is a function of the answer's content alone — no timings, no time of day, nothing that
depends on the order of a dictionary — and the same answer renders to the same bytes. It opens with what the
places are and how far to trust them ("verify before relying on them": ranking finds likely places, not
proven ones), then gives the code and relationship lists in the template's order.
"""

from __future__ import annotations

import re

from rag_lsp.retrieval.answer import ContextAnswer, ContextItem
from rag_lsp.retrieval.bundle.sections import relation_text

_FENCE = re.compile(r"`{3,}")


def prompt_block(answer: ContextAnswer) -> str:
    """The prompt block of an answer (ends with a newline)."""
    found_by = [name for name in answer.strategies_run if any(name in item.strategies for item in answer.items)]
    heading = f"Likely relevant places, ranked (found by {', '.join(found_by) or 'the index'}; verify before " \
        "relying on them):"
    lines = [heading]
    lines += [_place_line(rank, item) for rank, item in enumerate(answer.items, 1)] or ["(none found)"]
    lines.append("")
    lines.append(_summary_line(answer))
    if answer.sections:
        for section in answer.sections:
            body = _section(answer, section.name)
            if body:
                lines += ["", f"## {section.name}", *body]
    elif answer.items:
        lines += ["", "## places", *[line for item in answer.items for line in _place(item)]]
    return "\n".join(lines).rstrip("\n") + "\n"


def _place_line(rank: int, item: ContextItem) -> str:
    where = f"{item.path}:{item.start_line}-{item.end_line}"
    name = f" {item.qualname or item.symbol}" if item.symbol else ""
    reasons = "; ".join(item.why) or item.source
    return f"{rank}. {where}{name} — {reasons}"


def _summary_line(answer: ContextAnswer) -> str:
    task = answer.task
    set_by = "set by the request" if task.source == "request" else f"confidence {task.confidence:.2f}"
    checkouts = ", ".join(f"{c.root} at {c.label}" for c in answer.checkouts) or "no git checkout"
    return (f"Task: {task.task_type} ({set_by}); mode {answer.mode}; sufficiency {answer.sufficiency:.2f}; "
            f"{answer.tokens} tokens ({answer.token_count}) of {answer.budget_tokens}"
            f"{', truncated' if answer.truncated else ''}; {checkouts}.")


def _section(answer: ContextAnswer, name: str) -> list[str]:
    """A section's relationship lists (callers, callees), then its places."""
    lists = []
    for item in answer.items:
        relations = item.callers if name == "callers" else item.callees if name == "callees" else ()
        total = item.callers_total if name == "callers" else item.callees_total
        if relations:
            lists.append(relation_text(name, item.qualname or item.path, relations, total))
    lines = "\n\n".join(lists).splitlines()
    return lines + [line for item in answer.items if item.section == name for line in _place(item)]


def _place(item: ContextItem) -> list[str]:
    if item.shown == "unchanged":
        return [f"- {item.content}"]
    name = f" ({item.qualname or item.symbol})" if item.symbol else ""
    flags = [f"blob {item.blob_id[:12]}"] if item.blob_id else []
    if item.shown == "summary":
        flags.append("summary")
    if item.known == "changed":
        flags.append("changed since you read it")
    fence = "`" * max([3, *(len(run) + 1 for run in _FENCE.findall(item.content))])
    return [f"### {item.path}:{item.start_line}-{item.end_line}{name} [{', '.join(flags)}]",
            f"{fence}{item.language}", item.content, fence]
