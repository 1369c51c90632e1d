"""Enhancements of a question's ranking: dense vectors fused with the lexical lists, and the operator-bounded
``expand``, ``hyde`` and ``rerank`` knobs, with or without a language model."""
