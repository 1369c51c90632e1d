"""The workspace walk: which files under the roots are worth indexing, and why the rest are not.

Retrieval quality depends as much on what stays out of the index as on what
goes in: dependency trees, build output, lock files, minified bundles and
binaries drown real source in noise, and secrets must never reach a prompt.
Every exclusion is therefore counted under a stable reason string, so a status
report can explain exactly why a file the user expected is missing.

The rules themselves are ``admission.py``'s; this module applies them while
listing directories (ignore files are read here, as they are met). The work is
split by cost: ``walk`` applies only rules that need a name or an ``lstat``
(cheap, run for every entry); ``load`` reads a candidate and applies the
content rules (once per candidate, by the indexer). Neither ever raises
because of a file: races, permissions and odd file types become skip reasons.
Output order is deterministic so indexes and tests are stable.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rag_lsp.index.admission import (
    ADMISSION_REASONS,
    DEFAULT_ADMISSION,
    IGNORE_FILES,
    VIRTUALENV_MARKER,
    Admission,
    LoadedFile,
    directory_name_reason,
    directory_reason,
    is_virtualenv,
    skipped,
)

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

EXAMPLES_PER_REASON = 5

# Open flags for load: never follow a link, never block on a FIFO swapped in after the walk,
# and on Windows never translate newlines (the raw bytes feed git blob ids).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
_OPEN_FLAGS |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


@dataclass(frozen=True, slots=True)
class WalkedFile:
    """A candidate file found by ``walk``; ``path`` is POSIX and relative to ``root``."""

    root: Path
    path: str
    size: int
    mtime_ns: int

    @property
    def abs_path(self) -> Path:
        """The file's absolute path, built when asked for: a warm start walks thousands of files it never opens."""
        return self.root / self.path


@dataclass(slots=True)
class WalkStats:
    """Counts of what the walk yielded and skipped, so reports can explain omissions."""

    files: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def skip(self, reason: str, path: str) -> None:
        """Count one skip, keeping the first few paths per reason as examples for reports."""
        if reason not in ADMISSION_REASONS:
            raise ValueError(f"unknown skip reason: {reason!r}")
        self.skipped[reason] += 1
        examples = self.examples.setdefault(reason, [])
        if len(examples) < EXAMPLES_PER_REASON:
            examples.append(path)


_IGNORE_NAMES = frozenset(IGNORE_FILES)

# Ignore specs in force in a directory, shallowest first, each with the directory it is relative to.
_Layers = tuple[tuple[str, "GitIgnoreSpec"], ...]


@dataclass(frozen=True, slots=True)
class _Dir:
    """A directory being listed, with the ignore layers that apply inside it."""

    abs_path: str
    rel: str
    layers: _Layers


# A listed directory and its remaining entries, as kept on the walk's stack.
_Opened = tuple[_Dir, Iterator[os.DirEntry[str]]]


def walk(roots: Sequence[Path | str], stats: WalkStats, admission: Admission = DEFAULT_ADMISSION) -> Iterator[WalkedFile]:
    """Yield every candidate file under the roots in path order, counting each skip in ``stats``.

    Roots and the configured ignore globs are checked at the call, not at the
    first ``next()``: a missing root raises ``FileNotFoundError`` (or
    ``NotADirectoryError``) and a malformed configured pattern ``ValueError``,
    because those are configuration errors rather than properties of a file.
    """
    resolved = _resolve_roots(roots)
    admission.ignore_spec()
    return _walk_roots([_RootWalk(root, stats, admission) for root in resolved], stats)


def skip_reason(root: Path, rel: str, admission: Admission = DEFAULT_ADMISSION) -> str | None:
    """Why ``walk`` would leave out one file under ``root`` (a reason of ``ADMISSION_REASONS``), or None if it
    would yield it: for a single file that appeared while the editor had it open, without walking the tree.
    Content rules (binary, encoding) are ``load``'s, as in the walk."""
    return _RootWalk(Path(root).resolve(), WalkStats(), admission).skip_reason(rel)


def _resolve_roots(roots: Sequence[Path | str]) -> list[Path]:
    """Resolve and de-duplicate roots; a missing root is the caller's error, not a skip."""
    resolved: list[Path] = []
    for root in map(Path, roots):
        if not root.exists():
            raise FileNotFoundError(f"workspace root does not exist: {root}")
        if not root.is_dir():
            raise NotADirectoryError(f"workspace root is not a directory: {root}")
        if root.resolve() not in resolved:
            resolved.append(root.resolve())
    return resolved


def _walk_roots(walks: list[_RootWalk], stats: WalkStats) -> Iterator[WalkedFile]:
    """Walk the roots in order, yielding a file reached through overlapping roots only once."""
    seen: set[str] = set()
    for root_walk in walks:
        # Roots are resolved, absolute paths: joined as POSIX strings they need no normalisation.
        prefix = root_walk.root.as_posix().rstrip("/") + "/"
        for file in root_walk.files():
            key = prefix + file.path
            if key not in seen:
                seen.add(key)
                stats.files += 1
                yield file


class _RootWalk:
    """The walk of one root; holding the shared settings keeps the per-entry steps short."""

    def __init__(self, root: Path, stats: WalkStats, admission: Admission):
        self.root, self.stats, self.admission = root, stats, admission
        self.extra = admission.ignore_spec()

    def files(self) -> Iterator[WalkedFile]:
        """Walk depth-first in pre-order; an explicit stack means no recursion limit to hit."""
        exclude = _read_lines(os.path.join(self.root, ".git", "info", "exclude"))
        opened = self._open(_Dir(str(self.root), "", ()), exclude)
        stack = [opened] if opened else []
        while stack:
            parent, entries = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                continue
            rel = f"{parent.rel}/{entry.name}" if parent.rel else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                self.stats.skip("unreadable", rel)
                continue
            if stat.S_ISDIR(st.st_mode):
                child = self._enter(entry, rel, parent)
                if child:
                    stack.append(child)
            elif not stat.S_ISREG(st.st_mode):
                self.stats.skip("symlink" if stat.S_ISLNK(st.st_mode) else "special_file", rel)
            elif reason := self._file_reason(entry.name, rel, st.st_size, parent.layers):
                self.stats.skip(reason, rel)
            else:
                yield WalkedFile(self.root, rel, st.st_size, st.st_mtime_ns)

    def _enter(self, entry: os.DirEntry[str], rel: str, parent: _Dir) -> _Opened | None:
        """Open a subdirectory for walking, or count the one reason it is pruned.

        The reasons and their order are ``_dir_reason``'s, but whether a directory that is walked is a
        virtualenv is read from its listing: asking the disk for ``pyvenv.cfg`` in each directory cost a
        failed ``stat`` per directory of the tree.
        """
        reason = directory_name_reason(entry.name)
        if reason is None and self._is_ignored(rel, True, parent.layers):
            reason = "excluded_dir" if is_virtualenv(entry.path) else "ignored"
        if reason is None:
            directory = _Dir(entry.path, rel, parent.layers)
            entries = self._list(directory)
            if entries is None:
                return None
            if not _holds_virtualenv_marker(entries):
                return self._opened(directory, [], entries)
            reason = "excluded_dir"
        self.stats.skip(reason, rel)
        return None

    def _dir_reason(self, name: str, path: str, rel: str, layers: _Layers) -> str | None:
        """The reason to prune a subdirectory, or None to walk it."""
        return directory_reason(name, path) or ("ignored" if self._is_ignored(rel, True, layers) else None)

    def _open(self, directory: _Dir, inherited_lines: list[str]) -> _Opened | None:
        entries = self._list(directory)
        return None if entries is None else self._opened(directory, inherited_lines, entries)

    def _list(self, directory: _Dir) -> list[os.DirEntry[str]] | None:
        """A directory's entries sorted by name bytes, or None (counted) when it cannot be listed."""
        try:
            with os.scandir(directory.abs_path) as listing:
                entries = list(listing)
        except OSError:
            self.stats.skip("unreadable", directory.rel or ".")
            return None
        # ASCII names sort as strings as they do as bytes, without encoding each one.
        entries.sort(key=_name if all(entry.name.isascii() for entry in entries) else _name_bytes)
        return entries

    def _opened(self, directory: _Dir, inherited_lines: list[str], entries: list[os.DirEntry[str]]) -> _Opened:
        """A listed directory with its ignore files added as a new, deeper layer."""
        # Only the ignore files the listing shows are read: most directories have none, and asking the
        # disk for each name in each directory cost a warm start more than the listing itself.
        listed = {entry.name for entry in entries if entry.name in _IGNORE_NAMES}
        present = [name for name in IGNORE_FILES if name in listed]
        return self._layered(directory, inherited_lines, present), iter(entries)

    def _layered(self, directory: _Dir, inherited_lines: list[str], names: Sequence[str] = IGNORE_FILES) -> _Dir:
        """The directory with its ignore files among ``names`` (and ``inherited_lines``) as a new, deeper layer."""
        lines = list(inherited_lines)
        for name in names:
            lines += _read_lines(os.path.join(directory.abs_path, name))
        if lines:
            layer = (directory.rel, _compile(lines))
            directory = _Dir(directory.abs_path, directory.rel, (*directory.layers, layer))
        return directory

    def skip_reason(self, rel: str) -> str | None:
        """Why the walk would leave out the file at ``rel`` (its path and size rules), or None if it would
        yield it: the rules applied along its path alone, without listing any directory."""
        parts = rel.split("/")
        exclude = _read_lines(os.path.join(self.root, ".git", "info", "exclude"))
        directory = self._layered(_Dir(str(self.root), "", ()), exclude)
        for depth, name in enumerate(parts[:-1], 1):
            dir_rel = "/".join(parts[:depth])
            path = os.path.join(self.root, dir_rel)
            if reason := self._dir_reason(name, path, dir_rel, directory.layers):
                return reason
            directory = self._layered(_Dir(path, dir_rel, directory.layers), [])
        try:
            st = os.stat(self.root / rel, follow_symlinks=False)
        except OSError:
            return "unreadable"
        if not stat.S_ISREG(st.st_mode):
            return "symlink" if stat.S_ISLNK(st.st_mode) else "special_file"
        return self._file_reason(parts[-1], rel, st.st_size, directory.layers)

    def _is_ignored(self, rel: str, is_dir: bool, layers: _Layers) -> bool:
        """Apply git's precedence: configuration, then the deepest ignore file with a matching rule.

        Within one layer the last matching line wins, which is how a ``!``
        negation re-includes. Re-including below an ignored directory is
        impossible because that directory is pruned unseen.
        """
        checks = [("", self.extra)] if self.extra is not None else []
        for base, spec in [*checks, *reversed(layers)]:
            local = rel[len(base) + 1 :] if base else rel
            verdict = _last_match(spec, local + "/") if is_dir else spec.check_file(local).include
            if verdict is not None:
                return verdict
        return False

    def _file_reason(self, name: str, rel: str, size: int, layers: _Layers) -> str | None:
        """The path- and size-based reason to skip a regular file, or None to keep it."""
        return self.admission.file_reason(name, rel, size, lambda: self._is_ignored(rel, False, layers))


def _holds_virtualenv_marker(entries: list[os.DirEntry[str]]) -> bool:
    """Whether a listing holds ``pyvenv.cfg`` as a file (or a link to one), as ``is_virtualenv`` asks the disk."""
    for entry in entries:
        if entry.name == VIRTUALENV_MARKER:
            try:
                return entry.is_file()
            except OSError:
                return False
    return False


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _name_bytes(entry: os.DirEntry[str]) -> bytes:
    return os.fsencode(entry.name)


def _last_match(spec: GitIgnoreSpec, directory: str) -> bool | None:
    """Whether the last line of ``spec`` that matches a directory (given with its trailing slash) ignores it.

    pathspec's own verdict ranks a line that matches a directory only through its trailing slash (``!*/``)
    below one that matches its name (``*``), which is right for the files below a directory but not for the
    directory itself: git keeps ``core/`` under ``*`` then ``!*/``, and so must we (a Go repository ignoring
    everything but directories and files with an extension is otherwise indexed empty).
    """
    verdict = None
    for pattern in spec.patterns:
        if pattern.include is not None and pattern.match_file(directory) is not None:
            verdict = pattern.include
    return verdict


def _read_lines(path: str) -> list[str]:
    """Read an ignore file's lines; a missing or unreadable one simply contributes no rules.

    It is not counted as a skip: the ignore file itself is hidden and already
    counted as such when its directory is listed.
    """
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return []
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "surrogateescape").splitlines()
    except OSError:
        return []


def _compile(lines: list[str]) -> GitIgnoreSpec:
    """Compile ignore lines, dropping malformed lines rather than losing the whole file."""
    # Imported here: most trees a warm start walks have no ignore file, and pathspec costs 25 ms to import.
    from pathspec import GitIgnoreSpec

    try:
        return GitIgnoreSpec.from_lines(lines)
    except ValueError:
        if len(lines) == 1:
            return GitIgnoreSpec.from_lines([])
        return GitIgnoreSpec([pattern for line in lines for pattern in _compile([line]).patterns])


def load(file: WalkedFile | Path, admission: Admission = DEFAULT_ADMISSION, stats: WalkStats | None = None) -> LoadedFile:
    """Read and check one file's content; when ``stats`` is given, a skip is recorded there too."""
    if isinstance(file, WalkedFile):
        abs_path, rel = file.abs_path, file.path
    else:
        abs_path, rel = Path(file), Path(file).as_posix()
    data = _read(abs_path, admission.max_bytes)
    loaded = skipped(data) if isinstance(data, str) else admission.content(rel, data)
    if stats is not None and loaded.skip is not None:
        stats.skip(loaded.skip, rel)
    return loaded


def _read(path: Path, max_bytes: int) -> bytes | str:
    """Return the file's bytes, or a skip reason; the file may have changed since it was walked."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return "symlink" if exc.errno == errno.ELOOP else "unreadable"
    try:
        with open(fd, "rb") as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                return "special_file"
            if st.st_size > max_bytes:
                return "too_large"
            return handle.read(max_bytes + 1)
    except OSError:
        return "unreadable"


def read_inside(root: Path, path: Path) -> bytes | None:
    """A regular file's whole bytes, or None for anything the walk would not read either: a symlink (anywhere
    on the path below the root, so no link leads outside it), a directory, a FIFO or a device. Raises OSError.
    For a file named by an event or an editor, which no walk found."""
    if path.resolve() != path or not path.is_relative_to(root):
        return None
    descriptor = os.open(path, _OPEN_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            return stream.read()
    finally:
        os.close(descriptor)
