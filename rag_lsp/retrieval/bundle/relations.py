"""What a bundle adds around the ranked places: their callers and callees, and the tests, documents and
configuration files that name them.

A place is easier to trust with its neighbours: who calls a failing function, what a function to extend
relies on, which test exercises it. The answers come from the question's symbol provider, so a ready language
server gives type-aware references and definitions and the tree-sitter index answers otherwise (each
relationship names its source). Relationship lists are capped (``MAX_RELATIONS`` each, their totals kept);
only the top ``RELATED_ENTITIES`` definitions get tests, documents and configuration of their own.

``gather`` works on one root under its index lock, after ranking, and only for what the template lists.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from rag_lsp.index.enclosing import TOP_LEVEL, Outline, innermost_by_scan, outline
from rag_lsp.index.root_index import Index
from rag_lsp.index.store.per_file import PerFile
from rag_lsp.index.symbol_provider import PATTERNS, SymbolProvider
from rag_lsp.index.terms import tokenize
from rag_lsp.model import CLASS_LIKE_KINDS, Definition, Reference
from rag_lsp.path_kinds import is_prose_path, is_test_path
from rag_lsp.retrieval.bundle.provenance import Checkout
from rag_lsp.retrieval.bundle.summaries import Summariser, Summary
from rag_lsp.retrieval.bundle.templates import Template
from rag_lsp.retrieval.rank import Candidate
from rag_lsp.retrieval.window import Placed

MAX_RELATIONS = 10
# Names a definition uses that are resolved for its callees, at most.
MAX_CALLEE_NAMES = 40
# A name defined in more files than this is too ambiguous to call a callee.
MAX_CALLEE_FILES = 1
# Top definitions that get tests, documents and configuration of their own, and how many of each per answer.
RELATED_ENTITIES = 3
RELATED_PER_SECTION = 3
RELATED_PER_ENTITY = 2
# BM25 hits searched for documents and configuration that name a definition.
MENTION_POOL = 40
# A definition name shorter than this names too much text to search documents for.
MIN_MENTION_CHARS = 4
CONFIG_LANGUAGES = frozenset({"yaml", "toml", "json", "ini", "build"})
_DEFINITION_KINDS = CLASS_LIKE_KINDS | {"function", "method", "constructor", "macro"}


@dataclass(frozen=True, slots=True)
class Relation:
    """A definition related to a place: one that uses it (a caller) or that it uses (a callee), where, and
    which source said so (a language server's name, or ``tree-sitter``)."""

    qualname: str
    kind: str
    path: str
    line: int
    source: str


@dataclass(frozen=True, slots=True)
class Facts:
    """What the bundle knows about one place beyond its text."""

    summary: Summary
    callers: tuple[Relation, ...] = ()
    callees: tuple[Relation, ...] = ()
    callers_total: int = 0
    callees_total: int = 0


@dataclass(slots=True)
class Gathered:
    """One root's additions: facts per place (by path and first line), the related places found (role
    ``related``, in the order found) and its checkout."""

    root: str
    facts: dict[tuple[str, int], Facts] = field(default_factory=dict)
    related: list[Placed] = field(default_factory=list)
    checkout: Checkout | None = None


def section_of_path(path: str, language: str) -> str:
    """The section a place's file belongs in by its kind: ``tests``, ``docs``, ``configuration`` or
    ``source``."""
    if is_test_path(path):
        return "tests"
    if is_prose_path(path):
        return "docs"
    return "configuration" if language in CONFIG_LANGUAGES else "source"


def gather(index: Index, placed: Sequence[Placed], provider: SymbolProvider, template: Template | None,
           top_k: int, checkout: Checkout | None) -> Gathered:
    """Summaries of every place, and what ``template`` lists around the first ``top_k`` ranked ones; without a
    template (``ranked`` mode) nothing but the checkout, so that the plain ranking costs nothing more. Call
    under ``index.lock``."""
    summariser = Summariser(index)
    gathered = Gathered(str(index.root), checkout=checkout)
    if template is None:
        return gathered
    sections = set(template.sections)
    wants_references = bool(sections & {"callers", "tests"})
    entities = 0
    taken = {(p.chunk.path, p.start_line) for p in placed}
    resolved = _RESOLVED.get(index)
    if resolved is None:
        resolved = _RESOLVED[index] = {}
    for position, place in enumerate(placed):
        summary = summariser.summarise(place.chunk)
        definition = summary.definition
        if (definition is None or definition.kind not in _DEFINITION_KINDS or place.candidate.role != "ranked"
                or position >= top_k):
            gathered.facts[(place.chunk.path, place.start_line)] = Facts(summary)
            continue
        references = provider.references(definition) if wants_references else {}
        source = provider.reference_source(definition) if references else ""
        callers = _callers(index, provider, definition, references, resolved)
        callees = _callees(index, provider, definition) if "callees" in sections else []
        gathered.facts[(place.chunk.path, place.start_line)] = Facts(
            summary, tuple(Relation(qualname, kind, path, line, source)
                           for path, qualname, kind, line in callers[:MAX_RELATIONS]) if "callers" in sections else (),
            tuple(callees[:MAX_RELATIONS]), len(callers) if "callers" in sections else 0, len(callees))
        if entities < RELATED_ENTITIES:
            entities += 1
            if "tests" in sections:
                _add_tests(index, gathered, definition, callers, source, taken)
            # In the template's order: a set's order would differ between processes.
            for kind in (section for section in template.sections if section in ("docs", "configuration")):
                _add_mentions(index, gathered, definition, kind, taken)
    for place in gathered.related:
        gathered.facts[(place.chunk.path, place.start_line)] = Facts(summariser.summarise(place.chunk))
    return gathered


def _outline(index: Index, path: str) -> Outline:
    """A file's ``Outline``: a popular definition has thousands of references, and scanning its file's
    definitions for each was most of a bundle's cost; painting every line of each referencing file with its
    innermost definition cost a first question a hundred files' lines, where a file's uses are a few lines."""
    return outline(index.symbols.in_file(path))


# Files whose outlines are kept between questions (per index).
OUTLINES_KEPT = 1024
_OUTLINES = PerFile(_outline, OUTLINES_KEPT)


# A caller: the file, the qualified name of the definition there that uses a name (or the file's top level)
# and its kind, and the line of its first use. Most callers are counted, not shown: tuples, not relations.
Caller = tuple[str, str, str, int]
# A file's uses of a name as (line, qualified name, kind) at the first use by each innermost definition, for
# one list of references: a question's definitions often share a name (four ``clean`` methods, each with the
# same 943 uses in 67 files), and the next question asks about the same names again. Kept per index across
# answers (the ``RESOLVED_KEPT`` most recent), keyed by the path and the list's identity, and holding the list,
# so that an id is not reused while the entry lives, and the file's entry, so that a changed file is read afresh.
Resolved = dict[tuple[str, int], tuple[list[Reference], object, list[tuple[int, str, str]]]]
RESOLVED_KEPT = 8192
_RESOLVED: weakref.WeakKeyDictionary[Index, Resolved] = weakref.WeakKeyDictionary()


# Every caller of a name's uses as if no file were the definition's own, and where each file's callers lie in
# that list, kept per index for the ``CALLERS_KEPT`` most recent lists of references (by identity, holding the
# list): a name's definitions share their references (``SymbolProvider.references``), and a question's places
# are often definitions of one name (four ``clean`` methods; a vendored copy's), whose callers differ only in
# their own file.
Everyone = tuple[dict[str, list[Reference]], list[Caller], dict[str, tuple[int, int]]]
CALLERS_KEPT = 64
_EVERYONE: weakref.WeakKeyDictionary[Index, dict[int, Everyone]] = weakref.WeakKeyDictionary()


def _callers(index: Index, provider: SymbolProvider, definition: Definition, references: dict[str, list[Reference]],
             resolved: Resolved) -> list[Caller]:
    """One caller per definition (or file's top level) that uses ``definition``, at its first use, in path and
    line order; import statements and the definition's own lines are not uses (its own file's uses are read
    afresh: its own lines are another definition's uses)."""
    # The patterns' references of a definition are its name's uses, which the snapshot's columns hold with
    # their owners; a language server's are its own.
    stored_name = definition.name if provider.reference_source(definition) == PATTERNS else None
    _, everyone, spans = _everyone(index, provider, references, resolved, stored_name)
    own = spans.get(definition.path)
    if own is None:
        return everyone
    start, end = own
    return [*everyone[:start],
            *_per_file(definition.path, _first_uses(index, provider, definition.path, references[definition.path],
                                                    definition)),
            *everyone[end:]]


def _everyone(index: Index, provider: SymbolProvider, references: dict[str, list[Reference]],
              resolved: Resolved, stored_name: str | None) -> Everyone:
    """Every file's callers of ``references`` in path order, no file being the definition's own, and each
    file's place in that list. With ``stored_name`` (``references`` are that name's uses, as the index holds
    them) the files whose references are still the snapshot's are read from its columns
    (``StoredReferences.first_uses``); the others are looked up line by line."""
    kept = _EVERYONE.get(index)
    if kept is None:
        kept = _EVERYONE[index] = {}
    known = kept.get(id(references))
    if known is not None and known[0] is references:
        return known
    everyone: list[Caller] = []
    spans: dict[str, tuple[int, int]] = {}
    stored = index.references.stored if stored_name is not None else None
    columns = stored.first_uses(stored_name) if stored is not None and stored_name is not None else {}
    for path in sorted(references):
        firsts = (_stored_first_uses(index, path, columns.get(path, []))
                  if stored is not None and index.references.is_stored(path) else None)
        if firsts is None:
            uses = references[path]
            entry = index.files.get(path)
            found = resolved.get((path, id(uses)))
            if found is None or found[0] is not uses or found[1] is not entry:
                found = resolved[(path, id(uses))] = (uses, entry, _first_uses(index, provider, path, uses, None))
                if len(resolved) > RESOLVED_KEPT:
                    del resolved[next(iter(resolved))]
            firsts = found[2]
        start = len(everyone)
        everyone.extend(_per_file(path, firsts))
        spans[path] = (start, len(everyone))
    known = kept[id(references)] = (references, everyone, spans)
    if len(kept) > CALLERS_KEPT:
        del kept[next(iter(kept))]
    return known


def _per_file(path: str, firsts: list[tuple[int, str, str]]) -> list[Caller]:
    """A file's callers from its first uses: one per qualified name (the first), in line order."""
    found: dict[str, Caller] = {}
    for line, qualname, kind in firsts:
        if qualname not in found:
            found[qualname] = (path, qualname, kind, line)
    return list(found.values())


def _stored_first_uses(index: Index, path: str, owned: list[tuple[int, int]]) -> list[tuple[int, str, str]] | None:
    """A stored file's first uses as ``_first_uses`` gives them, from its (line, owner) pairs; None when an owner
    is not one of the file's definitions (a damaged snapshot: the file is then looked up line by line)."""
    definitions = index.symbols.in_file(path)
    if any(owner >= len(definitions) for _, owner in owned):
        return None
    return [(line, definitions[owner].qualname, definitions[owner].kind) if owner != TOP_LEVEL else
            (line, f"{path} (top level)", "code") for line, owner in owned]


# Lines of a file looked up by scanning its definitions rather than through its outline.
SCANNED_LINES = 3


def _first_uses(index: Index, provider: SymbolProvider, path: str, uses: list[Reference],
                within: Definition | None) -> list[tuple[int, str, str]]:
    """The first use in a file by each innermost definition as (line, its qualified name, its kind), the
    file's top level counting as one, in line order; uses on an import line, or inside ``within``, are not
    uses. A line has one innermost definition, so each distinct line is looked up once: in the file's
    ``Outline`` when it has more than ``SCANNED_LINES`` such lines, else by a scan of its definitions (a
    popular name's first question reads thousands of files that use it once or twice, and sorting each one's
    definitions into an outline cost more than the scans)."""
    imports = provider.import_lines(path)
    lines = [line for line in sorted({use.line for use in uses}) if line not in imports
             and (within is None or not within.start_line <= line <= within.end_line)]
    if len(lines) > SCANNED_LINES or _OUTLINES.holds(index, path):
        outline = _OUTLINES.get(index, path)
        definitions, innermost = outline.definitions, outline.innermost
    else:
        definitions = index.symbols.in_file(path)
        innermost = partial(innermost_by_scan, definitions)
    seen: set[int] = set()
    firsts = []
    for line in lines:
        number = innermost(line)
        if number not in seen:
            seen.add(number)
            enclosing = definitions[number] if number >= 0 else None
            firsts.append((line, enclosing.qualname, enclosing.kind) if enclosing is not None else
                          (line, f"{path} (top level)", "code"))
    return firsts


def _callees(index: Index, provider: SymbolProvider, definition: Definition) -> list[Relation]:
    """The definitions ``definition`` uses, in the order it first uses them: a name defined in its own file,
    or in one other file (a name defined in several is ambiguous and left out); itself and its members are
    not callees."""
    references = sorted((r for r in index.references.get(definition.path, ())
                         if definition.start_line <= r.line <= definition.end_line), key=lambda r: (r.line, r.name))
    names = list(dict.fromkeys(r.name for r in references if r.name != definition.name))[:MAX_CALLEE_NAMES]
    found: list[Relation] = []
    for name in names:
        defined = [d for d in provider.definitions(name)
                   if not (d.path == definition.path and definition.start_line <= d.start_line <= definition.end_line)]
        local = [d for d in defined if d.path == definition.path]
        if not local and len({d.path for d in defined}) > MAX_CALLEE_FILES:
            continue
        chosen = (local or defined)[:1]
        found.extend(Relation(d.qualname, d.kind, d.path, d.start_line, provider.source_of(d)) for d in chosen)
    return found


def _add_tests(index: Index, gathered: Gathered, definition: Definition, callers: list[Caller], source: str,
               taken: set[tuple[str, int]]) -> None:
    """The test code among a definition's callers, as places (at most ``RELATED_PER_ENTITY`` of it)."""
    added = 0
    for path, _, _, line in callers:
        if added == RELATED_PER_ENTITY or _count(gathered, "tests") >= RELATED_PER_SECTION:
            return
        if is_test_path(path) and _add(index, gathered, path, line, f"tests `{definition.qualname}` (line {line})",
                                       source, "tests", taken):
            added += 1


def _add_mentions(index: Index, gathered: Gathered, definition: Definition, section: str,
                  taken: set[tuple[str, int]]) -> None:
    """Prose or configuration chunks that name a definition (by its name, as written), best BM25 hit first."""
    if len(definition.name) < MIN_MENTION_CHARS:
        return
    added = 0
    hits = [chunk_id for chunk_id, _ in index.bm25.top_k(tokenize(definition.name), MENTION_POOL)]
    # A hit's section is told from its file (a chunk's language is its file's), and only a hit in the section
    # is built: most of the pool is source that a first question would otherwise build chunk by chunk.
    for chunk_id, path in zip(hits, index.chunks.paths_of(hits)):
        if added == RELATED_PER_ENTITY or _count(gathered, section) >= RELATED_PER_SECTION:
            return
        entry = index.files.get(path) if path is not None else None
        if entry is None or path is None or section_of_path(path, entry.language) != section:
            continue
        chunk = index.chunks[chunk_id]
        if definition.name in chunk.content and _add(index, gathered, chunk.path, chunk.start_line,
                                                     f"names `{definition.qualname}`", "index", section, taken):
            added += 1


def _count(gathered: Gathered, section: str) -> int:
    return sum(1 for p in gathered.related if section_of_path(p.chunk.path, p.chunk.language) == section)


def _add(index: Index, gathered: Gathered, path: str, line: int, why: str, source: str, section: str,
         taken: set[tuple[str, int]]) -> bool:
    found = index.chunk_at(path, line)
    if found is None or section_of_path(path, found[1].language) != section:
        return False
    chunk_id, chunk = found
    if (path, chunk.start_line) in taken:
        return False
    taken.add((path, chunk.start_line))
    candidate = Candidate(chunk_id, 0.0, [why], [], [source], role="related")
    gathered.related.append(Placed(candidate, chunk, str(index.root), chunk.start_line, chunk.end_line,
                                   chunk.content))
    return True


