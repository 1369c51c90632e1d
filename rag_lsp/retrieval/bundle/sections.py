"""Packing a bundle: the ranked places and what was gathered around them, in the order the task needs.

In ``task`` mode the template's sections are filled in priority order, greedily, each while the bundle stays
within min(budget × boost, budget); every piece gets at most max(1, min(2000, budget // topK)) × boost
tokens (cut at a line end); raw source takes at most half the budget, and places beyond it are shown as their
summaries (signature, docstring, members), as they are whenever the task does not need code and the verbosity
is minimal. Relationship lists (callers, callees) describe places already packed. The first piece is cut
down rather than dropped when it alone is too long, as in ``ranked`` mode, which packs the ranked places by
score alone (``retrieval/packing.py``), then the dependencies in what is left.

Either way a file the caller holds unchanged (its blob id in ``known``) is one line, "already read,
unchanged: path", and one it holds in another version is shown as its code, whole, and flagged ``changed``.
Items keep the ranked order (then related places, then dependencies); sections say what each holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_lsp.retrieval.answer import ContextItem, ContextRequest, SectionReport, verbosity_level
from rag_lsp.retrieval.bundle.provenance import known_blob
from rag_lsp.retrieval.bundle.relations import Facts, Gathered, Relation, section_of_path
from rag_lsp.retrieval.bundle.templates import RELATION_SECTIONS, Template
from rag_lsp.retrieval.bundle.tokenizers import Remembered, Tokenizer
from rag_lsp.retrieval.packing import PackRules, pack
from rag_lsp.retrieval.window import Placed

# A first piece is cut down rather than dropped if at least this much of it fits.
MIN_USEFUL_TOKENS = 32
# The most tokens one piece gets before its boost, and the share of the budget raw source may take.
MAX_ENTITY_TOKENS = 2000
RAW_SOURCE_SHARE = 0.5
# Sections whose places are code: raw source for them counts against the raw-source share.
_CODE_SECTIONS = frozenset({"source", "tests", "callees"})
_STANDARD = 1


@dataclass(frozen=True, slots=True)
class Composition:
    """A packed bundle: its items, its sections (task mode), whether something was left out or cut, and what sufficiency reads (the kinds of content present, whether code is
    shown, the longest docstring shown, the bundle's characters)."""

    items: tuple[ContextItem, ...]
    sections: tuple[SectionReport, ...]
    truncated: bool
    present: frozenset[str]
    has_source: bool
    longest_docstring: int
    bundle_chars: int


@dataclass(slots=True)
class _Shown:
    """What one place shows and how: ``form`` is ``source``, ``summary`` or ``unchanged``."""

    text: str
    form: str
    known: str | None = None


def relation_text(kind: str, owner: str, relations: Sequence[Relation], total: int) -> str:
    """A relationship list as the bundle shows it: a heading line, then one line per relation."""
    verb = "is called by" if kind == "callers" else "uses"
    more = f" ({len(relations)} of {total})" if total > len(relations) else ""
    lines = [f"`{owner}` {verb}{more}:"]
    lines += [f"- {r.qualname} ({r.kind}) {r.path}:{r.line} [{r.source}]" for r in relations]
    return "\n".join(lines)


class _Bundle:
    """The state of one packing: what is shown of each place (by its position in the item order), the
    relationship lists packed, and the tokens spent per section."""

    def __init__(self, gathered: Mapping[str, Gathered], template: Template | None, request: ContextRequest,
                 tokenizer: Tokenizer) -> None:
        self.gathered = gathered
        self.template = template
        # One packing counts most texts more than once (cut to a limit, checked against a cap, taken).
        self.tokenizer = Remembered(tokenizer)
        self.budget = request.budget_tokens
        self.entity_budget = max(1, min(MAX_ENTITY_TOKENS, request.budget_tokens // request.top_k))
        self.raw_wanted = (template is not None and template.raw_source) or \
            verbosity_level(request.verbosity) >= _STANDARD
        self.raw_cap = int(request.budget_tokens * RAW_SOURCE_SHARE)
        self.known = dict(request.known)
        self.used = self.raw_used = self.list_chars = 0
        self.truncated = False
        self.shown: dict[int, tuple[Placed, _Shown, int, str | None]] = {}
        # The relationship lists packed, by owner and section: the relations, their total and the list's tokens.
        self.lists: dict[tuple[int, str], tuple[tuple[Relation, ...], int, int]] = {}
        self.unchanged_files: set[tuple[str, str]] = set()
        # Per section: tokens, entries, entries left out for the budget.
        self.reports: dict[str, list[int]] = {}

    def facts(self, place: Placed) -> Facts | None:
        found = self.gathered.get(place.root)
        return found.facts.get((place.chunk.path, place.start_line)) if found else None

    def boost(self, section: str) -> float:
        return self.template.boost(section) if self.template is not None else 1.0

    def cap(self, section: str) -> int:
        return min(int(self.budget * self.boost(section)), self.budget)

    def show(self, place: Placed, section: str) -> _Shown | None:
        """How a place is shown in a section (None: an unchanged file already given its one line)."""
        held = known_blob(self.known, place.root, place.chunk.path)
        if held is not None and held == place.chunk.blob_id:
            if (place.root, place.chunk.path) in self.unchanged_files:
                return None
            return _Shown(f"already read, unchanged: {place.chunk.path}", "unchanged", "unchanged")
        if held is not None:
            return _Shown(place.content, "source", "changed")
        limit = max(1, int(self.entity_budget * self.boost(section)))
        if section not in _CODE_SECTIONS:
            return _Shown(self.tokenizer.truncate(place.content, limit), "source")
        if self.raw_wanted:
            raw = self.tokenizer.truncate(place.content, limit)
            if raw and self.raw_used + self.tokenizer.count(raw) <= self.raw_cap:
                return _Shown(raw, "source")
        facts = self.facts(place)
        summary = facts.summary.text if facts is not None and facts.summary.text else place.content
        return _Shown(self.tokenizer.truncate(summary, limit), "summary")

    def shows_file(self, place: Placed) -> bool:
        return any((shown.root, shown.chunk.path) == (place.root, place.chunk.path)
                   for shown, *_ in self.shown.values())

    def take(self, section: str, text: str) -> tuple[str, int] | None:
        """Room for a piece in a section: its (possibly cut) text and cost, or None when it does not fit."""
        cost = self.tokenizer.count(text)
        cap = self.cap(section)
        if self.used + cost <= cap:
            return text, cost
        self.truncated = True
        room = cap - self.used
        if self.used == 0 and room >= MIN_USEFUL_TOKENS and (shorter := self.tokenizer.truncate(text, room)):
            return shorter, self.tokenizer.count(shorter)
        return None

    def place(self, position: int, place: Placed, section: str) -> bool:
        report = self.reports.setdefault(section, [0, 0, 0])
        shown = self.show(place, section)
        if shown is None:
            return False
        taken = self.take(section, shown.text)
        if taken is None:
            report[2] += 1
            return False
        shown.text, cost = taken
        self.used += cost
        if shown.form == "source" and section in _CODE_SECTIONS and shown.known is None:
            self.raw_used += cost
        if shown.form == "unchanged":
            self.unchanged_files.add((place.root, place.chunk.path))
        self.shown[position] = (place, shown, cost, section)
        report[0] += cost
        report[1] += 1
        return True

    def relations(self, section: str, positions: Sequence[int]) -> None:
        """The ``callers`` or ``callees`` lists of the places packed so far, in their order."""
        report = self.reports.setdefault(section, [0, 0, 0])
        for position in positions:
            place = self.shown[position][0]
            facts = self.facts(place)
            if facts is None:
                continue
            found, total = (facts.callers, facts.callers_total) if section == "callers" else \
                (facts.callees, facts.callees_total)
            if not found:
                continue
            text = relation_text(section, place.chunk.qualname or place.chunk.path, found, total)
            cost = self.tokenizer.count(text)
            # A list is whole or left out, never cut.
            if self.used + cost > self.cap(section):
                self.truncated = True
                report[2] += 1
                continue
            self.used += cost
            self.list_chars += len(text)
            self.lists[(position, section)] = (found, total, cost)
            report[0] += cost
            report[1] += 1

    def composition(self) -> Composition:
        items = []
        docstring = 0
        for position, (place, shown, cost, section) in sorted(self.shown.items()):
            callers, callers_total, callers_cost = self.lists.get((position, "callers"), ((), 0, 0))
            callees, callees_total, callees_cost = self.lists.get((position, "callees"), ((), 0, 0))
            # An item's tokens are its text's and its lists', so that the items' tokens add up to the answer's.
            items.append(item_of(place, shown.text, cost + callers_cost + callees_cost, section=section,
                                 shown=shown.form, known=shown.known,
                                 commit=_commit(self.gathered, place), callers=callers, callees=callees,
                                 callers_total=callers_total, callees_total=callees_total))
            facts = self.facts(place)
            if facts is not None and shown.form != "unchanged":
                docstring = max(docstring, len(facts.summary.docstring))
        if self.template is not None:
            sections = tuple(self._report(name) for name in self.template.sections)
            present = frozenset(report.name for report in sections if report.entries)
        else:
            sections = ()
            present = frozenset("callees" if item.source == "dependency" else
                                section_of_path(item.path, item.language) for item in items)
        return Composition(tuple(items), sections, self.truncated, present,
                           any(item.shown == "source" for item in items), docstring,
                           sum(len(item.content) for item in items) + self.list_chars)

    def _report(self, name: str) -> SectionReport:
        tokens, entries, omitted = self.reports.get(name, [0, 0, 0])
        return SectionReport(name, tokens, self.cap(name), entries, omitted)


def compose(ranked: Sequence[Placed], dependencies: Sequence[Placed], gathered: Mapping[str, Gathered],
            template: Template, request: ContextRequest, tokenizer: Tokenizer) -> Composition:
    """The task-mode bundle of the merged ranked places (best first), the dependencies, and what was
    gathered around them per root.

    The first ``top_k`` ranked places are tried in their sections; a later one back-fills only while fewer
    than ``top_k`` ranked places are packed or still to try, so a place skipped for the budget can be
    replaced without a worse one taking the room of a better one of a later section."""
    bundle = _Bundle(gathered, template, request, tokenizer)
    related = [p for root in gathered.values() for p in root.related]
    places = [*ranked, *related, *dependencies]
    first_related, first_dependency = len(ranked), len(ranked) + len(related)
    by_section: dict[str, list[int]] = {}
    for position, place in enumerate(places):
        if position >= first_dependency:
            section = "callees" if "callees" in template.sections else None
        else:
            kind = section_of_path(place.chunk.path, place.chunk.language)
            section = kind if kind in template.sections else "source"
        if section is not None:
            by_section.setdefault(section, []).append(position)
    eligible = min(len(ranked), request.top_k)
    untried, packed = eligible, 0
    for section in template.sections:
        if section in RELATION_SECTIONS:
            bundle.relations(section, sorted(p for p in bundle.shown if p < first_related))
        for position in by_section.get(section, ()):
            if position < eligible:
                untried -= 1
            elif position < first_related and packed + untried >= request.top_k:
                continue
            elif position >= first_dependency and bundle.shows_file(places[position]):
                # A dependency is for a reader who has not got its file: one with a place shown has.
                continue
            taken = bundle.place(position, places[position], section)
            packed += taken and position < first_related
    return bundle.composition()


def compose_ranked(ranked: Sequence[Placed], dependencies: Sequence[Placed], gathered: Mapping[str, Gathered],
                   request: ContextRequest, tokenizer: Tokenizer) -> Composition:
    """The ranked places packed by score into the budget (at most ``top_k``), then the dependencies of the
    top places from other files in what is left: the answer without a template."""
    known = dict(request.known)

    def show(place: Placed) -> _Shown:
        held = known_blob(known, place.root, place.chunk.path)
        if held is not None and held == place.chunk.blob_id:
            return _Shown(f"already read, unchanged: {place.chunk.path}", "unchanged", "unchanged")
        return _Shown(place.content, "source", "changed" if held is not None else None)

    def unchanged_again(place: Placed, shown: _Shown, packed: Sequence) -> bool:
        return shown.form == "unchanged" and any(
            (p.item.root, p.item.chunk.path) == (place.root, place.chunk.path) for p in packed)

    def cut(shown: _Shown, text: str) -> _Shown:
        return _Shown(text, shown.form, shown.known)

    rules: PackRules[Placed, _Shown] = PackRules(
        show=show, text=lambda shown: shown.text, cut=cut, cost=lambda _, text: tokenizer.count(text),
        min_cut_tokens=MIN_USEFUL_TOKENS, redundant=unchanged_again, truncate=tokenizer.truncate)
    packing = pack(ranked, request.budget_tokens, request.top_k, rules)
    shown_files = {(p.item.root, p.item.chunk.path) for p in packing.packed}
    extra = [p for p in dependencies if (p.root, p.chunk.path) not in shown_files]
    after = pack(extra, request.budget_tokens - packing.used, len(extra), rules)
    bundle = _Bundle(gathered, None, request, tokenizer)
    for position, packed in enumerate((*packing.packed, *after.packed)):
        bundle.shown[position] = (packed.item, packed.shown, packed.cost, None)
    bundle.truncated = bool(packing.over_budget or packing.cut)
    return bundle.composition()


def _commit(gathered: Mapping[str, Gathered], place: Placed) -> str | None:
    found = gathered.get(place.root)
    return found.checkout.commit if found is not None and found.checkout is not None else None


def item_of(placed: Placed, content: str, tokens: int, **bundle: Any) -> ContextItem:
    """The answer's record of a packed place; ``bundle`` sets what the bundle decided (section, form, ...)."""
    chunk, candidate = placed.chunk, placed.candidate
    end_line = min(placed.end_line, placed.start_line + content.count("\n"))
    return ContextItem(
        root=placed.root,
        path=chunk.path,
        start_line=placed.start_line,
        end_line=end_line,
        symbol=chunk.symbol,
        qualname=chunk.qualname,
        kind=chunk.kind,
        language=chunk.language,
        score=round(candidate.score, 6),
        why=tuple(candidate.why),
        strategies=tuple(candidate.strategies),
        sources=tuple(candidate.sources),
        content=content,
        tokens=tokens,
        source=candidate.role,
        merged_from=placed.merged_from,
        deduped_from=placed.deduped_from,
        file_capped=placed.file_capped,
        # The kept chunk is the best-ranked of the places merged; a cut can end the text above it.
        focus_line=max(placed.start_line, min(chunk.start_line, end_line)),
        blob_id=chunk.blob_id,
        **bundle,
    )
