"""What the identifier under a cursor means, and how to name it so that the ranking finds exactly that.

A cursor on ``limiter.allow`` asks about one method, but by name it is every
``allow`` in the workspace, and the Go and Rust files called ``limiter`` fit
the receiver as well as anything. A ready language server resolves the name
exactly (``CompositeSymbolProvider.resolve``). Without one, ``resolve_chain``
follows what the file itself says, and gives up rather than guess:

- the chain's first name: ``self``/``this``/``cls`` is the enclosing class;
  a name the file imports resolves through the import graph; a name the file
  defines at its top level is that definition; a parameter of the enclosing
  function annotated with a type (``limiter: RateLimiter``, the ``name: Type``
  form of Python, TypeScript and Rust) or a name assigned a constructor call
  earlier in the function (``limiter = RateLimiter(...)``) is that type;
- each further name is a member of what came before: a module's or a class's
  definition, or an attribute the class types in its body (``self.book =
  Ledger()``, ``self.book: Ledger``, a field ``book: Ledger``, TypeScript's
  ``this.book = new Ledger()``), read with the imports of the class's file;
- the answer is the one definition left at the end, or nothing.

``focus_name`` then writes the definition as the shortest name the symbol
index looks up as exactly it and that does not read as a word of prose
(``_models.Response``, not ``Response``): ``RateLimiter.allow``; or
``rate_limiter.RateLimiter.allow`` when other files have a
``RateLimiter.allow`` too; or led by the whole path,
``scripts.limits.rate_limiter.RateLimiter.allow``, when other files are
called ``rate_limiter`` as well.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from rag_lsp import languages
from rag_lsp.completion.cursor import RECEIVERS
from rag_lsp.index.bindings import Resolver, Target, file_bindings
from rag_lsp.index.outline import FUNCTION_KINDS, FileText
from rag_lsp.model import CLASS_LIKE_KINDS, Definition
from rag_lsp.retrieval.query import PLAIN_WORD
from rag_lsp.workspace.session import Session

# An identifier with dots (``limiter.allow``), as a cursor touches it.
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_TYPE = r"([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)"


def focus_query(session: Session, path: Path, line: int, character: int) -> str:
    """A question for a cursor: the identifier under it, or with its enclosing definition when it defines
    nothing (a local, a keyword).

    ``line`` is 0-based and ``character`` counts code points; the open
    buffer's text is used when there is one. Where a ready language server
    or, failing that, the file's imports and annotations resolve the
    identifier, it is named as the definition it means
    (``rate_limiter.RateLimiter.allow`` for ``limiter.allow``), so that
    namesakes elsewhere do not count as much as it.
    """
    document = session.documents.get(path)
    try:
        text = document.text if document else path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    lines = text.splitlines()
    current = lines[line] if 0 <= line < len(lines) else ""
    word = word_at(current, character)
    located = session.locate(path)
    enclosing = None
    if located:
        root, rel = located
        with root.index.lock:
            covering = [d for d in root.index.symbols.in_file(rel) if d.start_line <= line + 1 <= d.end_line]
            defined = False
            if word:
                provider = session.provider(root, max_calls=1)
                resolved = provider.resolve(rel, line + 1, character) if provider is not None else None
                resolved = resolved or resolve_chain(root.index, rel, word, lines, line + 1)
                word = focus_name(root.index, resolved, word)
                defined = resolved is not None or bool(root.index.symbols.lookup(word))
        # The enclosing definition is on the user's screen already: it is the question only when the name
        # under the cursor defines nothing (a local, a keyword), not a rival to the name's definition.
        if covering and not defined:
            enclosing = max(covering, key=lambda d: d.start_line).qualname
    return " ".join(f"`{name}`" for name in dict.fromkeys(n for n in (word, enclosing) if n))


def word_at(line: str, character: int) -> str | None:
    """The identifier (with dots) that a cursor at ``character`` (code points) touches."""
    for match in IDENTIFIER.finditer(line):
        if match.start() <= character <= match.end():
            return match.group(0)
    return None


def resolve_chain(index, rel: str, chain: str, lines: list[str], line: int) -> Definition | None:
    """The one definition ``chain`` means at 1-based ``line`` of ``rel`` (whose text is ``lines``), by what the
    file imports, defines and annotates; None when that does not settle it. Call under ``index.lock``."""
    language = languages.language_for_path(rel)
    if language is None:
        return None
    first, *rest = chain.split(".")
    reader = _FileReader(index, rel, language, lines, line)
    target = reader.head(first)
    for part in rest:
        if not target:
            return None
        target = reader.member(target, part)
    return target.definitions[0] if target and len(target.definitions) == 1 else None


def focus_name(index, resolved: Definition | None, word: str) -> str:
    """The shortest name the index looks up as exactly ``resolved`` (its qualified name, led by its file's
    name or path when namesakes share it), else ``word``; also ``word`` when ``resolved`` is not what it names
    (a variable resolved to its type)."""
    if resolved is None or resolved.name != word.rsplit(".", 1)[-1]:
        return word
    module = PurePosixPath(resolved.path).with_suffix("")
    for qualifier in ("", f"{module.name}.", f"{'.'.join(module.parts)}."):
        name = qualifier + resolved.qualname
        # `Response` alone reads as a word of prose to the ranking, which weighs it by how common the word
        # is; the cursor's name is code for certain, so it is written with its module then.
        if PLAIN_WORD.match(name) or index.symbols.lookup(name) != [resolved]:
            continue
        return name
    return word


class _FileReader:
    """One file's imports, definitions and enclosing scopes around a line, for resolving names."""

    def __init__(self, index, rel: str, language: str, lines: list[str], line: int) -> None:
        self.index = index
        self.rel = rel
        self.lines = lines
        self.line = line
        self.resolver = Resolver(index)
        self.bindings = file_bindings(index.imports.get(rel, []), language).names
        self.definitions = index.symbols.in_file(rel)
        covering = sorted((d for d in self.definitions if d.start_line <= line <= d.end_line),
                          key=lambda d: d.start_line)
        self.owner = next((d for d in reversed(covering) if d.kind in CLASS_LIKE_KINDS), None)
        self.function = next((d for d in reversed(covering) if d.kind in FUNCTION_KINDS), None)

    def head(self, name: str) -> Target:
        if name in RECEIVERS:
            return Target(definitions=(self.owner,)) if self.owner else Target()
        return self.named(name) or self.typed(name)

    def named(self, name: str) -> Target:
        """A name the file imports, or defines at its top level."""
        binding = self.bindings.get(name)
        if binding is not None:
            target = self.resolver.binding(binding, self.rel)
            return self.resolver.named_in_module(target, name) or target
        defined = tuple(d for d in self.definitions if d.name == name and d.container is None)
        return Target(definitions=defined) if defined else Target()

    def typed(self, name: str) -> Target:
        """The class a parameter or local of the enclosing function is annotated or constructed as."""
        if self.function is None:
            return Target()
        scope = "\n".join(self.lines[self.function.start_line - 1 : self.line])
        return self.type_in(scope, re.escape(name))

    def member(self, target: Target, name: str) -> Target:
        """``x.name`` for a resolved ``x``: a member it defines, else an attribute its class types."""
        found = self.resolver.attribute(target, name)
        if found:
            return found
        for owner in target.definitions:
            if owner.kind not in CLASS_LIKE_KINDS:
                continue
            reader = self if owner.path == self.rel else self.other(owner)
            if reader is None:
                continue
            body = "\n".join(reader.lines[owner.start_line - 1 : owner.end_line])
            typed = reader.type_in(body, rf"(?:(?:self|this)\.)?{re.escape(name)}")
            if typed:
                return typed
        return Target()

    def other(self, owner: Definition) -> _FileReader | None:
        """A reader of the file that defines ``owner``, whose imports name the types its body uses."""
        language = languages.language_for_path(owner.path)
        if language is None:
            return None
        lines = FileText.from_chunks([chunk for _, chunk in self.index.chunks_of(owner.path)]).lines
        return _FileReader(self.index, owner.path, language, lines, owner.end_line)

    def type_in(self, scope: str, name: str) -> Target:
        """The class that ``name`` (a regular expression) is annotated or constructed as in ``scope``."""
        annotated = rf"(?<![\w$.]){name}\s*\??\s*:\s*{_TYPE}"
        constructed = rf"(?<![\w$.]){name}\s*=\s*(?:new\s+)?{_TYPE}\s*\("
        for pattern in (annotated, constructed):
            found = re.search(pattern, scope)
            if found is None:
                continue
            first, *rest = found.group(1).split(".")
            target = self.named(first)
            for part in rest:
                target = self.resolver.attribute(target, part) if target else target
            classes = tuple(d for d in target.definitions if d.kind in CLASS_LIKE_KINDS)
            if classes:
                return Target(definitions=classes, via=target.via)
        return Target()
