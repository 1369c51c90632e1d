"""The tuning constants of completion context: how much each piece of evidence and each source weighs.

The weights were set on cases generated from other repositories than the dev
cases (``bench/completion_bench.py --make-cases``), one signal at a time, to
round values both agreed on; the dev cases only measure them
(``bench/completion_results.md``). Scores are in units of "a use right on the
cursor line", which counts 1.

The other modules read these as ``weights.NAME`` at call time, never copy
them, so that ``bench/completion_bench.py --set NAME=VALUE`` can change one
for an ablation run.
"""

from __future__ import annotations

# The time budget and packing.

# Imported names resolved even when the time budget is spent (so an answer is never empty).
MIN_RESOLVED = 8
# Packing stops when less than this is left: no definition fits in fewer tokens.
MIN_SNIPPET_TOKENS = 12
# The first snippet is cut down to fit when this many tokens of it fit beside its path header.
MIN_CUT_TOKENS = 9

# Where to look around the cursor.

# Same-file definitions closer than this many lines to the cursor are on screen already.
NEAR_LINES = 40
# Lines around the cursor whose names are candidates (same-file and unbound definitions).
CONTEXT_BEFORE, CONTEXT_AFTER = 12, 4
# Lines whose words describe what is being written, for matching names.
NAME_CONTEXT_BEFORE, NAME_CONTEXT_AFTER = 6, 3
# Lines above the cursor searched for the call whose arguments are being typed.
OPEN_CALL_LINES = 3

# Proximity: how close to the cursor a name is used.

# The weight of a use halves every this many lines (before, after the cursor).
HALF_LIFE_BEFORE, HALF_LIFE_AFTER = 6.0, 6.0
# A use below the cursor weighs at most this much (right below it), and halves from there.
AFTER_WEIGHT = 0.5
# Uses farther than this many half-lives from the cursor are not counted.
PROXIMITY_REACH = 6

# Evidence for a name (``scoring.Evidence``).

# An imported name not used yet: it was imported to be used, likely soon.
UNUSED_IMPORT = 1.0
# That evidence is shared out when more imports than this are unused (as in a file being written, whose
# imports are used below the cursor): one of a few unused imports is likely next, one of twenty is not.
UNUSED_SHARED = 3.0
# A use on the cursor line itself, on top of its proximity: the line being written names it.
ON_CURSOR_LINE = 1.0
# The callee whose call's arguments are being typed.
OPEN_CALL = 1.0
# Named in the enclosing function's signature (a parameter's type, a default).
IN_SIGNATURE = 0.15
# On top of that, for a type the enclosing function returns but has not made yet.
RESULT_TYPE = 0.15
# A name made of the words of a parameter the function has not used anywhere yet: it is about to be.
PENDING = 0.5
# The same for a parameter used only below the cursor, as a share of ``PENDING``.
PENDING_USED_LATER = 0.3
# Named like the enclosing function (``def send`` calling ``send`` of another module).
ENCLOSING_NAME = 0.8
# A name whose words are words of the code nearby (locals, attributes, parameters), per share of its words.
NAME_CONTEXT = 0.4
# Used elsewhere in lines that look like the lines around the cursor, per unit of that likeness.
USE_CONTEXT = 2.0
# Uses compared with the cursor's surroundings, the nearest ones.
USE_CONTEXT_LIMIT = 32
# Lines compared around a use and around the cursor (offsets, weighted 1/|k|).
USE_CONTEXT_OFFSETS = (-3, -2, -1, 1, 2, 3)
# Names used together: imported or defined names within this many lines of a use and of the cursor.
COMPANION_LINES = 3
# Used elsewhere together with the names used around the cursor, per share of those names.
COMPANIONS = 0.3
# Completes the identifier being typed at the cursor.
TYPED_PREFIX = 2.0
# Constants and type aliases are read, not called: they weigh less than functions and classes.
DECLARATION_WEIGHT = 0.6

# Sources, below resolved imports (whose weight is their evidence).

# A definition a type-aware server resolved at the cursor: as sure as a use on the cursor line that is being typed.
SERVER_SCORE = ON_CURSOR_LINE + TYPED_PREFIX
# A definition of the cursor's own file, off screen, used near the cursor: a share of its evidence.
LOCAL_WEIGHT = 0.5
# A name no import binds, found by the symbol index: a guess, shared among its definitions.
UNBOUND_WEIGHT = 0.5
# A name defined more often than this in the workspace is too ambiguous to guess.
MAX_UNBOUND_DEFINITIONS = 3
# The enclosing class's and function's signatures when they are off screen.
ENCLOSING_SCORE = 0.15
# Similar code in an open buffer, per unit of Jaccard similarity.
SIMILAR_WEIGHT = 0.5
# Recently edited files closed since: the user's work too, but less of the moment than what is open.
RECENT_WEIGHT = 0.4
# Open buffers searched for similar code, most recently edited first, then closed recently edited files.
SIMILAR_FILES = 8
RECENT_FILES = 20
# Windows of similar code kept.
SIMILAR_LIMIT = 3
