"""The BM25 index over chunks: a frozen segment loaded in bulk, and the documents added since (one by one, or
in a refresh's batches), scored together exactly like ``rank_bm25.BM25Okapi``."""
