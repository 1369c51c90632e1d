"""From ranked candidates to the answer: what each shows, what fits the token budget, the prompt block.

Each definition is shown as its head (signature and docstring) first, so that
many fit; leftover budget then expands the best of them to their bodies.
Packing is the one greedy packer (``retrieval/packing.py``); a snippet's cost
includes its path header, so the prompt never exceeds the budget.
"""

from __future__ import annotations

from functools import lru_cache

from rag_lsp import languages
from rag_lsp.completion import weights
from rag_lsp.completion.caches import Caches
from rag_lsp.completion.cursor import FileAnalysis, split_lines
from rag_lsp.completion.snippets import CompletionAnswer, Snippet
from rag_lsp.completion.sources import Candidate
from rag_lsp.index.outline import Excerpt, FileText, body, head
from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.packing import PackRules, pack
from rag_lsp.retrieval.token_count import estimate_tokens


class Excerpts:
    """The text candidates show: the cursor's file from its analysis (it changes with every keystroke, not
    worth caching), open buffers from the buffer, other files from the index through the caches."""

    def __init__(self, caches: Caches, index: Index, analysis: FileAnalysis, cursor_rel: str) -> None:
        self.caches = caches
        self.index = index
        self.analysis = analysis
        self.cursor_rel = cursor_rel

    def of(self, candidate: Candidate, full: bool) -> Excerpt:
        """A candidate's head, or its body when ``full``; a window of similar code whole."""
        definition = candidate.definition
        if definition is None:
            start, end = candidate.lines
            if candidate.path == self.cursor_rel:
                lines = self._text_of(candidate.path).slice(start, end)
            else:
                lines = self._window_lines(candidate.path, start, end)
            return Excerpt("\n".join(lines).rstrip(), start, end, True)
        if candidate.path == self.cursor_rel:
            members = [d for d in self.analysis.definitions if d.container == definition.qualname]
            cut = body if full else head
            return cut(self._text_of(candidate.path), definition, candidate.language,
                       languages.spec(candidate.language).comment, members)
        return self.caches.excerpt(self.index, candidate.path, definition, candidate.language, full)

    def _text_of(self, path: str) -> FileText:
        if path == self.cursor_rel:
            return FileText(self.analysis.lines)
        return self.caches.file_text(self.index, path)

    def _window_lines(self, path: str, start: int, end: int) -> list[str]:
        document = self.caches.session.documents.get(self.index.root / path)
        if document is not None:
            with document.lock:
                lines = split_lines(document.text)
            return lines[start - 1 : end]
        return self._text_of(path).slice(start, end)


def pack_answer(ranked: list[Candidate], excerpts: Excerpts, budget: int, limit: int, root: str,
                timed_out: bool) -> CompletionAnswer:
    """The best candidates that fit ``budget`` tokens (at most ``limit`` of them) as heads; leftover budget
    then shows the best of them whole."""
    rules: PackRules[Candidate, Excerpt] = PackRules(
        show=lambda candidate: excerpts.of(candidate, full=False),
        text=lambda excerpt: excerpt.content,
        cut=lambda excerpt, shorter: Excerpt(shorter, excerpt.start_line,
                                             excerpt.start_line + shorter.count("\n"), False),
        cost=_cost,
        min_cut_tokens=weights.MIN_CUT_TOKENS,
        min_room=weights.MIN_SNIPPET_TOKENS,
        redundant=lambda candidate, excerpt, packed: any(
            _overlaps(candidate, excerpt, other.item, other.shown) for other in packed),
    )
    packing = pack(ranked, budget, limit, rules)
    chosen = [(packed.item, packed.shown, packed.cost) for packed in packing.packed]
    used = packing.used
    # Leftover budget: bodies for the best snippets that are shown in part.
    for position, (candidate, excerpt, cost) in enumerate(chosen):
        if excerpt.complete or candidate.definition is None:
            continue
        fuller = excerpts.of(candidate, full=True)
        extra = _cost(candidate, fuller.content) - cost
        if fuller.content != excerpt.content and used + extra <= budget:
            chosen[position] = (candidate, fuller, cost + extra)
            used += extra
    return _answer(chosen, root, budget, packing.over_budget + packing.over_limit, timed_out or packing.cut)


def _answer(chosen: list[tuple[Candidate, Excerpt, int]], root: str, budget: int, omitted: int,
            truncated: bool) -> CompletionAnswer:
    snippets = []
    blocks = []
    for candidate, excerpt, _ in chosen:
        definition = candidate.definition
        snippets.append(Snippet(
            path=candidate.path,
            start_line=excerpt.start_line,
            end_line=excerpt.end_line,
            symbol=definition.name if definition else None,
            qualname=definition.qualname if definition else None,
            kind=definition.kind if definition else "code",
            language=candidate.language,
            source=candidate.source,
            score=round(candidate.score, 4),
            why=tuple(candidate.why),
            content=excerpt.content,
            tokens=estimate_tokens(excerpt.content),
        ))
        blocks.append(f"{_header(candidate)}\n{excerpt.content}\n")
    prompt = "\n".join(blocks)
    return CompletionAnswer(root, tuple(snippets), prompt, estimate_tokens(prompt), budget, omitted, truncated)


def _overlaps(candidate: Candidate, excerpt: Excerpt, other: Candidate, shown: Excerpt) -> bool:
    return (candidate.path == other.path and excerpt.start_line <= shown.end_line
            and shown.start_line <= excerpt.end_line)


def _header(candidate: Candidate) -> str:
    return f"{languages.spec(candidate.language).comment} {candidate.path}"


def _cost(candidate: Candidate, content: str) -> int:
    return _snippet_cost(_header(candidate), content)


@lru_cache(maxsize=4096)
def _snippet_cost(header: str, content: str) -> int:
    """Tokens a snippet takes in the prompt: its header comment, its content and the blank line after it."""
    return estimate_tokens(f"{header}\n{content}\n\n")
