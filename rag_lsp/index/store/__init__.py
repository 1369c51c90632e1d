"""Persistence of the whole index in bulk form: the snapshot file, its format, and the chunk table it serves."""
