"""How strongly the code around the cursor calls for a name, and why, in words a user can check.

Every source scores its names the same way (``Evidence.score``): how close to
the cursor the name is used (``proximity``), whether the cursor line or the
call being typed names it, whether it is imported but unused, named in the
enclosing signature, named like the enclosing function or like a parameter
not used yet, made of the words of the code nearby, used elsewhere in code
that looks like the code around the cursor, or together with the names used
around it. The weights are in ``weights.py``; the reasons go into each
snippet's ``why``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from rag_lsp.completion import similar, weights
from rag_lsp.completion.cursor import FileAnalysis, name_words
from rag_lsp.completion.signals import Cursor, Signals
from rag_lsp.model import Definition


def proximity(lines: list[int], cursor: int) -> tuple[float, int | None]:
    """How close to the cursor a name is used: 1 on the cursor line, halving with distance (noisy-or),
    and the distance of the nearest use (negative above the cursor).

    ``lines`` is sorted; uses beyond a few half-lives add nothing and are skipped.
    """
    low = bisect_left(lines, cursor - weights.PROXIMITY_REACH * weights.HALF_LIFE_BEFORE)
    high = bisect_right(lines, cursor + weights.PROXIMITY_REACH * weights.HALF_LIFE_AFTER)
    miss = 1.0
    for line in lines[low:high]:
        distance = line - cursor
        if distance <= 0:
            weight = 0.5 ** (-distance / weights.HALF_LIFE_BEFORE)
        else:
            weight = weights.AFTER_WEIGHT * 0.5 ** ((distance - 1) / weights.HALF_LIFE_AFTER)
        miss *= 1 - min(weight, 0.999)
    if not lines:
        return 0.0, None
    position = bisect_left(lines, cursor)
    nearest = min((lines[i] - cursor for i in (position - 1, position) if 0 <= i < len(lines)), key=abs)
    return 1 - miss, nearest


def where(distance: int | None) -> str:
    """A distance from the cursor in words (``3 lines above``)."""
    if distance is None:
        return ""
    if distance == 0:
        return "on the cursor line"
    lines = abs(distance)
    return f"{lines} line{'s' if lines != 1 else ''} {'above' if distance < 0 else 'below'}"


def kind_weight(definition: Definition) -> float:
    """Constants and type aliases weigh less than what is called."""
    return weights.DECLARATION_WEIGHT if definition.kind in ("constant", "type") else 1.0


@dataclass(frozen=True, slots=True)
class Evidence:
    """Scores names against one cursor's surroundings."""

    analysis: FileAnalysis
    cursor: Cursor
    signals: Signals

    def prior(self, name: str) -> float:
        """A cheap first guess of a name's evidence: how close it is used, or whether it is unused."""
        uses = self.analysis.uses.get(name)
        if not uses:
            return weights.UNUSED_IMPORT
        near, nearest = proximity(uses, self.cursor.line)
        return near + (weights.ON_CURSOR_LINE if nearest == 0 else 0.0)

    def score(self, name: str, uses: list[int], unused_counts: bool = True,
              words: bool = True) -> tuple[float, list[str]]:
        """How strongly the code around the cursor calls for ``name``, used on ``uses``, and why.

        ``unused_counts``: whether no use at all is evidence (for an import).
        ``words``: whether the words of the name count (not for the cursor
        file's own members, whose names are what the code nearby is made of).
        """
        signals = self.signals
        calls = [line for line in uses if line not in self.analysis.signature_lines]
        score, nearest = proximity(calls, self.cursor.line)
        why = [f"used {where(nearest)}"] if nearest is not None else []
        if not uses and unused_counts:
            score += signals.unused_weight
            why.append("imported but not used yet")
        if nearest == 0:
            score += weights.ON_CURSOR_LINE
        if signals.open_call and (signals.open_call == name or signals.open_call.endswith("." + name)):
            score += weights.OPEN_CALL
            why.append("the cursor is in its call's arguments")
        if name in signals.signature_names:
            score += weights.IN_SIGNATURE
            why.append("named in the enclosing signature")
            if name in signals.result_names:
                score += weights.RESULT_TYPE
                why.append("the enclosing function returns it and has not made one yet")
        if words and signals.function is not None and name == signals.function.name:
            score += weights.ENCLOSING_NAME
            why.append("named like the enclosing function")
        parts = name_words(name)
        if words and parts:
            pending = (self._words_share(parts & signals.pending_words)
                       + weights.PENDING_USED_LATER * self._words_share(parts & signals.later_words)) / len(parts)
            if pending:
                score += weights.PENDING * min(pending, 1.0)
                why.append("named like a parameter the function has not used yet")
            near = self._words_share(parts & signals.context_words) / len(parts)
            if near:
                score += weights.NAME_CONTEXT * near
                why.append(f"its name shares {', '.join(sorted(parts & signals.context_words))} with the code nearby")
        similarity, line = self._use_context(name, calls)
        if similarity > 0.05:
            score += weights.USE_CONTEXT * similarity
            why.append(f"the code around its use on line {line} looks like the code around the cursor")
        share, line, shared = self._companions(name, calls)
        if share > 0:
            score += weights.COMPANIONS * share
            why.append(f"used with {', '.join(shared)} on line {line}, as near the cursor")
        return score, why

    def _companions(self, name: str, uses: list[int]) -> tuple[float, int | None, list[str]]:
        """How much of what is used near the cursor was also used near another use of ``name``.

        Code uses names in families (``if is_async_gen(f)`` goes with ``elif
        is_gen(f)``): a name whose other uses came with the imported and
        defined names used around the cursor is likely to come with them again,
        in whatever order the lines are.
        """
        companions = self.signals.companions
        if not companions or name in companions:
            return 0.0, None, []
        terms, cursor = self.analysis.line_terms, self.cursor.line
        reach, limit = weights.COMPANION_LINES, weights.USE_CONTEXT_LIMIT
        best, line_of_best, shared = 0.0, None, set()
        for line in uses[-limit:] if len(uses) > limit else uses:
            if abs(line - cursor) <= reach:
                continue
            near = set()
            for other in terms[max(line - reach, 1) - 1 : line + reach]:
                near.update(other & companions)
            if len(near) > len(shared):
                best, line_of_best, shared = len(near) / len(companions), line, near
        return best, line_of_best, sorted(shared)

    def _words_share(self, words: frozenset[str]) -> float:
        """Credit for name words found nearby: a word in the names of n imports gives each 1/n."""
        counts = self.signals.word_counts
        return sum(1 / counts.get(word, 1) for word in words)

    def _use_context(self, name: str, uses: list[int]) -> tuple[float, int | None]:
        """The best similarity between the lines around a use of ``name`` and the lines around the cursor.

        Lines are compared at the same offsets (the line above a use with the
        line above the cursor, ...), nearer offsets weighing more; what is
        typed on the cursor line is compared with the rest of the use's line.
        """
        terms, cursor = self.analysis.line_terms, self.cursor.line
        offsets, limit = weights.USE_CONTEXT_OFFSETS, weights.USE_CONTEXT_LIMIT
        around = [(k, terms[cursor + k - 1]) for k in offsets
                  if 0 < cursor + k <= len(terms) and terms[cursor + k - 1]]
        total = sum(1 / abs(k) for k in offsets)
        typed = self.signals.cursor_terms - {name}
        if typed:
            total += 1
        if not around and not typed:
            return 0.0, None
        reach = max(offsets)
        best, line_of_best = 0.0, None
        if len(uses) > limit:
            position = bisect_left(uses, cursor)
            start = max(0, min(position - limit // 2, len(uses) - limit))
            uses = uses[start : start + limit]
        for line in uses:
            if abs(line - cursor) <= reach:
                continue
            similarity = 0.0
            for k, mine in around:
                if 0 < line + k <= len(terms) and (theirs := terms[line + k - 1]):
                    shared = len(mine & theirs)
                    if shared:
                        similarity += shared / (len(mine) + len(theirs) - shared) / abs(k)
            if typed:
                similarity += similar.jaccard(typed, terms[line - 1] - {name})
            if similarity > best:
                best, line_of_best = similarity, line
        return best / total, line_of_best
