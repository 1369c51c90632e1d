"""Templates per task type: the sections a bundle holds, in priority order, with their budget boosts.

A question asking why something fails needs the failing code and who calls it; one asking how something works
needs the documentation and the signatures first. The templates are data (``rag_lsp/data/tasks.toml``, which
also holds the classification patterns), so that tuning a bundle is an edit of a table, and this module checks
them once when they are loaded: a known section in each list, once, and relationship lists only after
``source`` (they describe places already in the bundle).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

SECTIONS = ("source", "callers", "callees", "tests", "configuration", "docs")
# Sections that list relationships of places already in the bundle rather than places of their own.
RELATION_SECTIONS = frozenset({"callers", "callees"})
TASK_TYPES = ("explain", "debug", "extend", "review", "locate", "general")
# The task type of a question that matches no pattern.
GENERAL = "general"


@dataclass(frozen=True, slots=True)
class Template:
    """What one task type's bundle holds: its sections in priority order, their boosts, and whether the task
    needs raw source at every verbosity."""

    task_type: str
    sections: tuple[str, ...]
    boosts: tuple[tuple[str, float], ...]
    raw_source: bool

    def boost(self, section: str) -> float:
        return dict(self.boosts).get(section, 1.0)


@cache
def task_table() -> dict[str, Any]:
    """``data/tasks.toml`` as read, checked to name exactly the known task types in their order."""
    table = tomllib.loads(resources.files("rag_lsp").joinpath("data/tasks.toml").read_text(encoding="utf-8"))
    if tuple(table) != TASK_TYPES:
        raise ValueError(f"tasks.toml must define {', '.join(TASK_TYPES)} in that order, got {', '.join(table)}")
    return table


@cache
def template(task_type: str) -> Template:
    """The template of a task type (one of ``TASK_TYPES``)."""
    entry = task_table()[task_type]
    sections = tuple(entry["sections"])
    boosts = tuple(sorted((str(name), float(value)) for name, value in entry.get("boosts", {}).items()))
    unknown = [name for name in (*sections, *dict(boosts)) if name not in SECTIONS]
    if unknown or len(set(sections)) != len(sections) or "source" not in sections:
        raise ValueError(f"tasks.toml [{task_type}]: sections must be distinct, include 'source' and be among "
                         f"{', '.join(SECTIONS)} (got {', '.join(sections)})")
    first_relation = min((sections.index(s) for s in sections if s in RELATION_SECTIONS), default=len(sections))
    if first_relation < sections.index("source"):
        raise ValueError(f"tasks.toml [{task_type}]: relationship sections must come after 'source'")
    if any(value <= 0 for _, value in boosts):
        raise ValueError(f"tasks.toml [{task_type}]: boosts must be positive")
    return Template(task_type, sections, boosts, bool(entry.get("raw_source", False)))
