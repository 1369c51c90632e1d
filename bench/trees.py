"""Benchmark trees: a repository's files at one commit, written from a bare mirror, outside the project.

Mirrors are full-history bare git directories laid out as
``MIRRORS/<owner>+<name>/repo`` (some snapshots are clones, with the git
directory at ``repo/.git``). A tree is written from the mirror's blobs
(``git ls-tree -r`` + ``git cat-file --batch``) rather than with ``git
archive`` or a worktree, because mirrors lack blobs of 4 MiB and more and both
of those fail on a missing blob; such files are skipped.

One tree per repository is kept and moved from commit to commit: a manifest
(path → blob id) says what the tree holds, so moving it rewrites only the
files that differ. The 200 multi-language cases sit on 191 base commits of 10
repositories; with one tree per repository, the index cache of that root
(blob-keyed, see ``rag_lsp/index/cache.py``) is shared by all its cases, and
only the files that changed between two cases are parsed again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

# A dot-name, so that the workspace walk leaves it out of the index.
MANIFEST = ".bench-tree.json"


def mirror_of(mirrors_dir: Path, repo: str) -> Path:
    """The git directory of ``owner/name``'s mirror."""
    owner, name = repo.split("/")
    base = mirrors_dir / f"{owner}+{name}" / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def resolve_commit(mirror: Path, revision: str) -> tuple[str, bool]:
    """The commit to check out and whether it is ``revision``; the mirror's newest commit when it lacks it.

    Two of the pinned Semble revisions (httpx, circe) are newer than the
    mirrors; a benchmark then says which commit it measured.
    """
    found = subprocess.run(["git", f"--git-dir={mirror}", "cat-file", "-e", f"{revision}^{{commit}}"],
                           capture_output=True, check=False)
    if found.returncode == 0:
        return revision, True
    head = subprocess.run(["git", f"--git-dir={mirror}", "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True)
    return head.stdout.strip(), False


def checkout(mirror: Path, commit: str, tree: Path) -> Path:
    """Make ``tree`` hold ``commit``'s regular files, rewriting only those that differ from what it holds.

    The manifest is removed before any change and written after the last, so
    an interrupted update leaves a tree without one, which the next call
    rebuilds from scratch.
    """
    manifest = tree / MANIFEST
    held = json.loads(manifest.read_text()) if manifest.exists() else None
    if held is not None and held["commit"] == commit:
        return tree
    if held is None and tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True, exist_ok=True)
    manifest.unlink(missing_ok=True)
    held_files: dict[str, str] = held["files"] if held else {}
    wanted = _listing(mirror, commit)
    for path in sorted(held_files.keys() - wanted.keys()):
        _remove(tree, path)
    changed = sorted((path, blob) for path, blob in wanted.items() if held_files.get(path) != blob)
    missing = _write_blobs(mirror, changed, tree)
    files = {path: blob for path, blob in wanted.items() if path not in missing}
    manifest.write_text(json.dumps({"commit": commit, "files": files}, sort_keys=True))
    return tree


def tree_files(tree: Path) -> list[str]:
    """The paths a tree holds (relative to the repository root), from its manifest."""
    return sorted(json.loads((tree / MANIFEST).read_text())["files"])


def _listing(mirror: Path, commit: str) -> dict[str, str]:
    """Path → blob id of ``commit``'s regular files (symlinks and submodules are not part of what is indexed)."""
    listing = subprocess.run(["git", f"--git-dir={mirror}", "ls-tree", "-r", "-z", commit], capture_output=True,
                             check=True).stdout
    files = {}
    for record in listing.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            mode, kind, sha = meta.split()
            if kind == b"blob" and mode in (b"100644", b"100755"):
                files[path.decode("utf-8", "surrogateescape")] = sha.decode()
    return files


def _write_blobs(mirror: Path, entries: list[tuple[str, str]], tree: Path) -> set[str]:
    """Write each (path, blob) under ``tree``; return the paths whose blob the mirror lacks."""
    if not entries:
        return set()
    batch = subprocess.run(["git", f"--git-dir={mirror}", "cat-file", "--batch"],
                           input=b"".join(blob.encode() + b"\n" for _, blob in entries), capture_output=True,
                           check=True).stdout
    missing = set()
    offset = 0
    for path, _ in entries:
        header_end = batch.index(b"\n", offset)
        header = batch[offset:header_end].split()
        offset = header_end + 1
        if header[-1] == b"missing":
            missing.add(path)
            _remove(tree, path)
            continue
        size = int(header[2])
        target = tree / path
        if target.is_dir():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[offset:offset + size])
        offset += size + 1
    return missing


def _remove(tree: Path, path: str) -> None:
    """Delete a file and the folders it leaves empty, so a later file may take a folder's name."""
    target = tree / path
    target.unlink(missing_ok=True)
    for folder in target.parents:
        if folder == tree or not folder.is_dir() or any(folder.iterdir()):
            break
        folder.rmdir()
