"""One file's text → definitions, references, imports and chunks: tree-sitter queries where a grammar exists,
declaration patterns where none does, line windows or headings for the rest."""
