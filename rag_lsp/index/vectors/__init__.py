"""Dense vectors of the chunks: embedders, the per-chunk store and its cache, background embedding."""
