"""The ranking stack after the evidence strategies: candidate lists fused by reciprocal rank, deterministic
rerank signals, a code-graph prior, file coherence and saturation, the relative cut with backfill, and the
dependencies of the top places. Each stage is switchable (``RankingConfig``) and names itself in ``why``."""
