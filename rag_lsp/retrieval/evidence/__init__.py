"""Developer evidence read into anchors: stack frames, tool locations and test ids.

What a developer pastes next to a question (a traceback, compiler output, a
failing test's name) points at code more precisely than the question's words.
These pure functions only read that text; turning the anchors into files of a
checkout is the retrieval strategies' job. Every parser is total: any text
gives a list, possibly empty, and never an exception.
"""

from rag_lsp.retrieval.evidence.build_errors import Location, parse_locations
from rag_lsp.retrieval.evidence.test_ids import TestId, parse_test_ids
from rag_lsp.retrieval.evidence.traces import Frame, parse_frames

__all__ = ["Frame", "Location", "TestId", "parse_frames", "parse_locations", "parse_test_ids"]
