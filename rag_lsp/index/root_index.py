"""The workspace index: one root's files, chunks, BM25 postings and symbols, kept in step.

``Index.refresh`` brings the index in line with the disk (load the snapshot,
walk, reuse the cache, parse what changed, drop what vanished);
``Index.set_file`` and ``Index.remove_file`` apply one file at a time, which
is what a language server does on every edit. All three go through
``_install``/``remove_file``, so the chunk table, the BM25 index and the
symbol index never disagree.

After a refresh that changed anything, the index is written as one snapshot
(``store/snapshot.py``) and its chunks and BM25 postings are then served from
that file: a warm start loads it in bulk instead of rebuilding objects file by
file, and chunk text stays on disk until asked for. Without a cache the
snapshot is an anonymous temporary file, so both cases run the same code.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from tree_sitter import Tree

from rag_lsp.gc_pause import paused_gc
from rag_lsp.heap import release_free_memory
from rag_lsp.index.admission import CONTENT_REASONS, DEFAULT_ADMISSION, Admission
from rag_lsp.index.cache import CachedFile, CachedStamps, IndexCache, cache_path_for, decode, fingerprint
from rag_lsp.index.file_work import Work, analyse, analyse_in, chunk_terms, start_workers, taken
from rag_lsp.index.index_records import DEFAULT_BUDGET, FileEntry, IndexBudget, IndexStats
from rag_lsp.index.parsing.incremental import NodeCache
from rag_lsp.index.parsing.narrowing import Reparsed
from rag_lsp.index.parsing.parse import blob_id, parse_file
from rag_lsp.index.parsing.window_parse import Window
from rag_lsp.index.postings.bm25_index import BM25Index
from rag_lsp.index.store import snapshot
from rag_lsp.index.store.chunk_layout import LAYOUTS, Layout
from rag_lsp.index.store.chunk_table import ChunkTable
from rag_lsp.index.store.code_links import CodeLinks, file_links, loaded_links
from rag_lsp.index.store.import_table import ImportMap
from rag_lsp.index.store.reference_table import ReferenceMap
from rag_lsp.index.store.snapshot_file import SnapshotError, SnapshotFile, SnapshotWriter
from rag_lsp.index.symbol_table import SymbolIndex
from rag_lsp.index.walk import WalkedFile, WalkStats, load, walk
from rag_lsp.model import Chunk, Definition, ParsedFile

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

# Below this many files to parse, a process pool costs more than it saves.
POOL_THRESHOLD = 64
# Files handled per batch: the unit of locking, progress reports and cache writes.
REFRESH_BATCH = 128
# During a refresh, chunks held as objects are moved into a spill file once there are this many, and as
# many as the file holds already (the rewriting amortised) or SPILL_MAX_CHUNKS (memory bounded: at 100,000 files
# half of a million chunks would otherwise be held as objects before the last save).
SPILL_MIN_CHUNKS = 16384
SPILL_MAX_CHUNKS = 131072
# Changes the journal remembers (``Index.changed_since``); past them (a refresh) their readers compare every file.
JOURNAL_CHANGES = 1024

Progress = Callable[[int, int], None]
# Numbers each Index of this process, so that two indexes of one root never share a version.
_INSTANCES = itertools.count()


class Index:
    """All indexed knowledge about one workspace root."""

    def __init__(self, root: Path | str, *, cache_root: Path | None = None, use_cache: bool = True,
                 admission: Admission = DEFAULT_ADMISSION, budget: IndexBudget = DEFAULT_BUDGET) -> None:
        self.root = Path(root).resolve()
        self.budget = budget
        # What may be indexed: the walk, the disk events and the editor's buffers all ask it.
        self.admission = admission
        self.chunks = ChunkTable()
        self.files: dict[str, FileEntry] = {}
        self.references = ReferenceMap()
        self.imports = ImportMap()
        self.bm25 = BM25Index()
        self.symbols = SymbolIndex()
        self.cache = IndexCache(cache_path_for(self.root, cache_root)) if use_cache else None
        self.stats = IndexStats(root=str(self.root), cache=str(self.cache.path) if self.cache else None)
        self._next_id = 0
        # The snapshot or spill the stored chunks, references and imports are read from, and the one the BM25
        # segment is (the same, or an earlier spill's when the last was written without it), if any.
        self._served: SnapshotFile | None = None
        self._postings_source: SnapshotFile | None = None
        # Counts changes of indexed text (a file added, changed or removed), for ``version``.
        self._changes = 0
        # The path of each change since change number ``_journal_start`` (``changed_since``).
        self._journal: list[str] = []
        self._journal_start = 0
        self._instance = next(_INSTANCES)
        # Guards every structure above: writers install under it, readers query under it.
        self.lock = threading.RLock()
        # BM25 documents waiting for one add_many, while a batch is being installed.
        self._bulk: dict[int, list[str]] | None = None
        # Whether the index changed since it was last written as a snapshot.
        self._unsaved = False
        # Walked files that ``load`` rejected for their content, with the size and mtime they had: a refresh
        # skips them while those hold instead of reading them again (on Django, 1,300 binaries, mostly .mo files).
        self.rejected: dict[str, tuple[int, int, str]] = {}
        # The files' links (the code graph's edges), computed when first asked for or loaded from the snapshot.
        self.links: CodeLinks | None = None
        # Whether a refresh is under way: the index grows batch by batch, and what is derived from all of it
        # (the code graph) is out of date by the next batch.
        self.refreshing = False
        # The version the index had when it was last saved and the snapshot that save wrote, while the index is
        # served from it.
        self._saved: tuple[tuple[int, int], SnapshotFile] | None = None
        # The index that replaced this one (``hand_over``): edits made through this one go to it.
        self._heir: Index | None = None

    @property
    def version(self) -> tuple[int, int]:
        """Which indexed text this is: it changes with every file added, changed or removed, and differs
        between two indexes of one root. Answers remembered from a language server hold while it holds."""
        return self._instance, self._changes

    def changed_since(self, version: tuple[int, int] | None) -> list[str] | None:
        """The paths added, changed or removed since ``version`` (an earlier ``version`` of this index), in
        order, a path once per change; None when the journal does not reach back that far (another index, a
        snapshot loaded since, more than ``JOURNAL_CHANGES`` changes): then compare every file. What derives
        from the files (the lookup tables, the code links, BM25 over files) brings itself up to date after an
        edit from these instead of a pass over every file's entry (three of them cost a question after an
        edit on Django some 10 ms)."""
        if version is None or version[0] != self._instance or not self._journal_start <= version[1] <= self._changes:
            return None
        return self._journal[version[1] - self._journal_start:]

    def _changed(self, path: str) -> None:
        """Count a change of ``path``'s indexed text."""
        self._changes += 1
        if len(self._journal) >= JOURNAL_CHANGES:
            self._journal.clear()
            self._journal_start = self._changes
        else:
            self._journal.append(path)

    # Whole-workspace refresh.

    def refresh(self, progress: Progress | None = None, skip: Callable[[str], bool] | None = None) -> IndexStats:
        """Bring the index in line with the disk and return fresh statistics.

        Work is installed in batches under ``self.lock``, so a concurrent
        reader sees a consistent index that grows as the refresh goes on.
        ``progress(done, total)`` is called after each batch; ``skip(path)``
        names files whose indexed text must not come from the disk (open
        editor buffers, which win until they are closed).

        The cyclic garbage collector is paused throughout: a refresh builds
        objects that live on (definitions, references, chunks until the
        snapshot takes them), and the collector, triggered by allocation
        counts, traversed them again and again (3.4 s of a cold index of
        Django). What a first refresh loads from the snapshot is moved into
        the permanent generation; what it parses is not, because other
        threads (the server's) run meanwhile and their garbage must not be
        frozen with it.
        """
        started = time.perf_counter()
        walk_stats = WalkStats()
        stats = IndexStats(root=str(self.root), cache=self.stats.cache)
        self.refreshing = True
        try:
            with paused_gc(keep=not self.files):
                from_snapshot = self._load_snapshot() if not self.files else set()
                candidates, stats.truncated = self.budget.first_files(list(walk([self.root], walk_stats, self.admission)))
            # A first index of many files (no snapshot) will parse most of them: the workers start, and import
            # what they need, while the files are read (about 0.2 s of Django's cold index).
            pool = start_workers() if not self.files and len(candidates) >= POOL_THRESHOLD else None
            try:
                with paused_gc():
                    return self._refresh_walked(candidates, from_snapshot, started, stats, walk_stats, progress,
                                                skip, pool)
            finally:
                if pool:
                    pool.shutdown(cancel_futures=True)
        finally:
            self.refreshing = False

    def _refresh_walked(self, candidates: list[WalkedFile], from_snapshot: set[str], started: float,
                        stats: IndexStats, walk_stats: WalkStats, progress: Progress | None,
                        skip: Callable[[str], bool] | None, pool: ProcessPoolExecutor | None) -> IndexStats:
        """``refresh`` after the walk: reuse, parse and install the candidates, drop what vanished, save.
        ``pool`` is the parse workers started already, if any."""
        cached = CachedStamps(self.cache)
        deadline = started + self.budget.seconds if self.budget.seconds else None
        seen: set[str] = set()
        to_parse: list[Work | WalkedFile] = []
        done = 0
        for start in range(0, len(candidates), REFRESH_BATCH):
            if deadline is not None and time.perf_counter() > deadline:
                stats.truncated = "seconds"
                # Files not reached keep what was indexed before.
                seen.update(walked.path for walked in candidates[start:])
                break
            with self._bulk_install():
                for walked in candidates[start : start + REFRESH_BATCH]:
                    outcome, pending = self._refresh_one(walked, cached, walk_stats, skip)
                    if outcome != "skipped":
                        seen.add(walked.path)
                    if pending:
                        to_parse.append(pending)
                        continue
                    stats.reused += outcome == "reused" or (outcome == "current" and walked.path in from_snapshot)
                    done += 1
            self._spill_if_large()
            if progress:
                progress(done, len(candidates))
        wanted = len(to_parse)
        stats.parsed, refused = self._parse_all(to_parse, done, len(candidates), progress, deadline, pool, walk_stats)
        # Files whose content was refused when they were read for parsing were not seen after all.
        seen.difference_update(refused)
        if stats.parsed + len(refused) < wanted:
            stats.truncated = "seconds"
        with self.lock:
            stale = sorted(path for path in set(self.files) - seen if not (skip and skip(path)))
            for path in stale:
                self.remove_file(path)
            self._forget_rejections({walked.path for walked in candidates})
        if self.cache:
            if self.cache.settle():
                # The database was damaged and started anew, and the snapshot beside it went with it.
                self._unsaved = True
            self.cache.delete_many(sorted((cached.loaded() - seen) | set(stale)))
        if self._unsaved or (self.cache and (self.links is None or self.links.version != self.version)):
            # Also when only the links are missing or out of date.
            self.save()
        stats.removed = len(stale)
        stats.skipped = walk_stats.skipped
        stats.skip_examples = walk_stats.examples
        stats.elapsed_ms = (time.perf_counter() - started) * 1000
        self.stats = self._count(stats)
        if (warning := self.truncation_warning()) is not None:
            self.stats.warnings.append(warning)
        return self.stats

    def _remember_rejection(self, walked: WalkedFile, reason: str | None,
                            before: tuple[int, int, str] | None) -> None:
        """Remember (or forget) why ``load`` rejected a walked file; only content reasons are worth keeping."""
        now = (walked.size, walked.mtime_ns, reason) if reason in CONTENT_REASONS else None
        if now == before:
            return
        if now is None:
            del self.rejected[walked.path]
        else:
            self.rejected[walked.path] = now
        self._unsaved = True

    def _forget_rejections(self, walked: set[str]) -> None:
        """Drop the remembered rejections of files the walk no longer yields or that are indexed now."""
        gone = [path for path in self.rejected if path not in walked or path in self.files]
        for path in gone:
            del self.rejected[path]
        self._unsaved = self._unsaved or bool(gone)

    def truncation_warning(self) -> str | None:
        """What an answer must say when the last refresh stopped at a budget (the index holds part of the root)."""
        return self.budget.spent(self.root, self.stats.truncated) if self.stats.truncated else None

    def _refresh_one(self, walked: WalkedFile, cached: CachedStamps, walk_stats: WalkStats,
                     skip: Callable[[str], bool] | None) -> tuple[str, Work | WalkedFile | None]:
        """Handle one walked file: ("current" | "reused" | "skipped", None) or ("parse", work), the work being
        the file itself when it is still to be read."""
        if skip and skip(walked.path):
            return "current", None
        known = self.files.get(walked.path)
        if known and (known.size, known.mtime_ns) == (walked.size, walked.mtime_ns):
            return "current", None
        rejected = self.rejected.get(walked.path)
        if rejected and rejected[:2] == (walked.size, walked.mtime_ns):
            walk_stats.skip(rejected[2], walked.path)
            return "skipped", None
        stamp = cached.get(walked.path)
        if stamp and stamp[1:] == (walked.size, walked.mtime_ns) and self._install_cached(walked.path, None):
            return "reused", None
        if not known and not stamp:
            # Nothing to compare its bytes with: read when it is parsed (``_read``), so that the texts of a first
            # index are not all held at once.
            return "parse", walked
        work = self._loaded(walked, walk_stats)
        if work is None:
            return "skipped", None
        blob = work[2]
        if known and known.blob_id == blob:
            # Touched, not changed: only the stamp is new.
            known.size, known.mtime_ns = walked.size, walked.mtime_ns
            self._unsaved = True
            if self.cache:
                self.cache.restamp(walked.path, walked.size, walked.mtime_ns)
            return "reused", None
        if stamp and stamp[0] == blob and self._install_cached(walked.path, blob, walked.size, walked.mtime_ns):
            return "reused", None
        return "parse", work

    def _parse_all(self, work: list[Work | WalkedFile], done: int, total: int, progress: Progress | None,
                   deadline: float | None, started: ProcessPoolExecutor | None,
                   walk_stats: WalkStats) -> tuple[int, list[str]]:
        """Parse changed files (in worker processes when there are many: those ``started`` already, else new
        ones, shut down when done) and install them in batches, until the deadline; returns how many were
        installed and the paths whose content was refused when they were read. ``work`` is emptied as it is
        taken: each file is read just before it is parsed and its text held only until then, and the workers
        are handed ``WORKERS_AHEAD_BYTES`` of files at most beyond what they returned (``file_work.analyse_in``):
        holding every text until a worker took it cost nineteen copies of Django 0.48 GB of cold peak."""
        if not work:
            return 0, []
        pool = started or (start_workers() if len(work) >= POOL_THRESHOLD else None)
        refused: list[str] = []
        readable = (read for item in taken(work) if (read := self._read(item, walk_stats, refused)) is not None)
        try:
            if pool:
                results: Iterator[CachedFile] = (decode(path, blob, size, mtime, payload) for path, size, mtime, blob,
                                                 payload in analyse_in(pool, readable))
            else:
                results = (CachedFile(*analyse(path, text, blob), size, mtime)
                           for path, text, blob, size, mtime in readable)
            batch: list[CachedFile] = []
            installed = 0
            for entry in results:
                batch.append(entry)
                if len(batch) >= REFRESH_BATCH:
                    # The files refused as they were read count as done, as those refused before.
                    self._install_batch(batch, done + installed + len(refused), total, progress)
                    installed += len(batch)
                    batch = []
                    if deadline is not None and time.perf_counter() > deadline:
                        break
            else:
                self._install_batch(batch, done + installed + len(refused), total, progress)
                installed += len(batch)
        finally:
            # Before the save that follows: the workers hold some 50 MB each, and the save's merge is the peak.
            if pool:
                pool.shutdown(cancel_futures=True)
        return installed, refused

    def _read(self, item: Work | WalkedFile, walk_stats: WalkStats, refused: list[str]) -> Work | None:
        """A file to parse with its text and blob id, read now (``_loaded``) if ``_refresh_one`` left it unread;
        None, its path added to ``refused``, when the content rules refuse it."""
        if not isinstance(item, WalkedFile):
            return item
        work = self._loaded(item, walk_stats)
        if work is None:
            refused.append(item.path)
        return work

    def _loaded(self, walked: WalkedFile, walk_stats: WalkStats) -> Work | None:
        """A walked file read as work to parse, or None when the content rules refuse it, which is remembered.
        The bytes are not kept: the blob id is all the parse needs of them (Django: 33 MB of a cold index)."""
        loaded = load(walked, self.admission, walk_stats)
        if loaded.text is None or loaded.data is None:
            with self.lock:
                self._remember_rejection(walked, loaded.skip, self.rejected.get(walked.path))
            return None
        return walked.path, loaded.text, blob_id(loaded.data), walked.size, walked.mtime_ns

    @contextmanager
    def _bulk_install(self) -> Iterator[None]:
        """Hold the lock and collect new BM25 documents, added in one ``add_many`` at the end.

        Adding a batch at once is several times faster than one ``add`` per
        chunk, which is what makes a warm start from the cache quick.
        """
        with self.lock:
            self._bulk = {}
            try:
                yield
            finally:
                pending, self._bulk = self._bulk, None
                self.bm25.add_many(pending.items())

    def _install_batch(self, batch: list[CachedFile], done: int, total: int, progress: Progress | None) -> None:
        """Install parsed files, store them in the cache and report ``done`` files before them as done, and them."""
        with self._bulk_install():
            for entry in batch:
                self._install(entry.parsed, entry.tokens, entry.size, entry.mtime_ns)
        if self.cache and batch:
            self.cache.put_many(batch)
        self._spill_if_large()
        if progress:
            progress(done + len(batch), total)

    def _install_cached(self, path: str, blob: str | None, size: int | None = None,
                        mtime_ns: int | None = None) -> bool:
        """Install a file from the cache; refresh its stamp when size/mtime are given."""
        entry = self.cache.get(path, blob) if self.cache else None
        if entry is None or self.cache is None:
            return False
        if size is not None and mtime_ns is not None:
            entry.size, entry.mtime_ns = size, mtime_ns
            self.cache.put_many([entry])
        self._install(entry.parsed, entry.tokens, entry.size, entry.mtime_ns)
        return True

    def _count(self, stats: IndexStats) -> IndexStats:
        stats.files = len(self.files)
        stats.chunks = len(self.chunks)
        stats.definitions = len(self.symbols)
        stats.languages = Counter(entry.language for entry in self.files.values())
        errors = sorted(path for path, entry in self.files.items() if entry.error)
        stats.parse_errors = len(errors)
        stats.parse_error_examples = errors[:5]
        stats.warnings = list(self.cache.warnings) if self.cache else []
        return stats

    # One file at a time (the language server's path).

    def set_file(self, path: str, text: str, data: bytes | None = None,
                 tree: Tree | Window | Reparsed | None = None, reuse: NodeCache | None = None) -> ParsedFile:
        """Index one file's current text (an editor buffer or a changed file), replacing the old.

        ``tree`` is a tree-sitter tree of ``text`` that the caller parsed
        incrementally (with what changed since its last tree, ``parsing/narrowing.py``),
        or a window of it (``parsing/window_parse.py``); without
        it the file is parsed from scratch. ``reuse`` is the buffer's record of
        what each top-level node yielded last time.
        """
        parsed = parse_file(path, text, data=data, tree=tree, reuse=reuse)
        size = len(data) if data is not None else len(text.encode("utf-8"))
        index = self
        while True:
            with index.lock:
                heir = index._heir
                if heir is None:
                    index._install(parsed, None, size, 0)
                    return parsed
            # Replaced meanwhile (``hand_over``): the edit goes to the index that took this one's place.
            index = heir

    def remove_file(self, path: str) -> None:
        with self.lock:
            heir = self._heir
            if heir is None:
                self._remove(path)
                return
        # Replaced meanwhile (``hand_over``): the edit goes to the index that took this one's place.
        heir.remove_file(path)

    def _remove(self, path: str) -> None:
        """``remove_file`` on this index (the lock held)."""
        entry = self.files.pop(path, None)
        if entry is None:
            return
        self._changed(path)
        self._unsaved = True
        for chunk_id in entry.chunk_ids:
            self._forget_chunk(chunk_id)
        self.references.pop(path, None)
        self.imports.pop(path, None)
        self.symbols.remove_file(path)

    def _forget_chunk(self, chunk_id: int) -> None:
        del self.chunks[chunk_id]
        if self._bulk is not None and chunk_id in self._bulk:
            del self._bulk[chunk_id]
        else:
            self.bm25.remove(chunk_id)

    def _install(self, parsed: ParsedFile, tokens: list[list[str]] | None, size: int, mtime_ns: int) -> None:
        """Make ``parsed`` the indexed state of its file, touching BM25 only for changed chunks.

        A chunk whose text is unchanged keeps its id and its postings, and only
        its record (line numbers may have moved) is replaced; that keeps an
        edit's cost proportional to what the edit changed. ``tokens`` are the
        chunks' terms when a worker computed them already.
        """
        reusable: dict[str, list[int]] = {}
        old = self.files.get(parsed.path)
        if old is None or old.blob_id != parsed.blob_id:
            self._changed(parsed.path)
        self._unsaved = True
        for chunk_id in old.chunk_ids if old else ():
            reusable.setdefault(self.chunks.content(chunk_id), []).append(chunk_id)
        ids = []
        for position, chunk in enumerate(parsed.chunks):
            bucket = reusable.get(chunk.content)
            if bucket:
                chunk_id = bucket.pop(0)
            else:
                chunk_id = self._next_id
                self._next_id += 1
                terms = tokens[position] if tokens is not None else chunk_terms(chunk)
                if self._bulk is not None:
                    self._bulk[chunk_id] = terms
                else:
                    self.bm25.add(chunk_id, terms)
            self.chunks[chunk_id] = chunk
            ids.append(chunk_id)
        for leftovers in reusable.values():
            for chunk_id in leftovers:
                self._forget_chunk(chunk_id)
        self.files[parsed.path] = FileEntry(parsed.blob_id, parsed.language, size, mtime_ns, ids, parsed.error)
        self.references[parsed.path] = parsed.references
        self.imports[parsed.path] = parsed.imports
        hint = parsed.chunks[0].content if parsed.chunks and parsed.chunks[0].symbol is None else ""
        self.symbols.add_file(parsed, hint)

    # The snapshot.

    def _snapshot_identity(self) -> dict:
        """What a snapshot must have been made for to be loaded: this rag_lsp, this root, this cache database."""
        return {"fingerprint": fingerprint(), "root": str(self.root), "epoch": self.cache.epoch if self.cache else ""}

    def _load_snapshot(self) -> set[str]:
        """Install the cache's snapshot into an empty index; returns the paths it held (none without one)."""
        if self.cache is None or not self.cache.available:
            return set()
        path = self.cache.snapshot_path
        try:
            return self.adopt(SnapshotFile(path))
        except FileNotFoundError:
            return set()
        except (OSError, SnapshotError) as exc:
            if "another version" not in str(exc):
                self.cache.warn(f"discarding the index snapshot {path}, it will be rebuilt: {exc}")
            self.cache.discard_snapshot()
            return set()

    def adopt(self, source: SnapshotFile) -> set[str]:
        """Install the snapshot ``source`` into this empty index and serve from it; returns the paths it holds.
        Raises SnapshotError (or OSError) when it is damaged or was made for another root, cache or version;
        the index is then unchanged. What it loads is moved out of the collector's sight (``paused_gc``): it
        lives as long as the index."""
        with paused_gc(keep=True):
            loaded = snapshot.load(source, self._snapshot_identity())
            with self.lock:
                self.files = {f.path: FileEntry(f.blob_id, f.language, f.size, f.mtime_ns, f.chunk_ids, f.error)
                              for f in loaded.files}
                self._served = self._postings_source = source
                self.chunks.rebase(loaded.chunks)
                self.bm25 = BM25Index(segment=loaded.segment)
                self.references = ReferenceMap(loaded.references)
                self.imports = ImportMap(loaded.imports)
                self.symbols = SymbolIndex()
                self.symbols.load(self.files, loaded.definitions, loaded.hints)
                self.rejected = loaded.rejected
                self._next_id = max(self._next_id, int(loaded.meta.get("next_id", 0)))
                # Every file changed at once: whoever derives from the files compares them all.
                self._changes += 1
                self._journal.clear()
                self._journal_start = self._changes
                if loaded.links is not None:
                    self.links = loaded_links(self, loaded.links, loaded.definitions)
        # Loading read the definitions, links and checks through; questions map again what they read (a warm
        # start of nineteen copies of Django kept 0.55 GB of the file's pages counted without this).
        source.release()
        return set(self.files)

    def save(self) -> None:
        """Write the index as a snapshot and serve its chunks and postings from it from now on.

        The snapshot goes to the cache (atomically: another process reading
        the old one keeps it), or to an anonymous temporary file without one.
        Failing to write costs only the saving: the index stays as it was.

        The lock is taken twice, for the code links and then for the writing
        (which merges BM25's documents as it writes them), so that a question
        waiting for it answers in between instead of after both (during a cold
        index of Django, questions waited up to 3 s for a save). Whatever
        changes meanwhile is linked again before the writing.
        """
        with self.lock:
            file_links(self)
        # Let a thread woken by the release take the lock before this one takes it back.
        time.sleep(0)
        with self.lock:
            file_links(self)
            target = self.cache.snapshot_path if self.cache and self.cache.available else None
            meta = {**self._snapshot_identity(), "next_id": self._next_id}
            written = self._write(lambda writer: snapshot.save(self, writer, meta), target, "index snapshot")
            if written is not None:
                self._unsaved = False
                self._saved = self.version, written

    # Replacing a built index by its snapshot.

    def hand_over(self, heir: Index) -> SnapshotFile | None:
        """The snapshot ``heir`` (a new, empty index of this root) is to load in this index's place
        (``workspace/reload.py`` says why and when), or None when this index changed since its save or is being
        refreshed. Once a snapshot is returned, edits made through this index go to ``heir`` (``set_file``,
        ``remove_file``): a writer that took it just before the swap loses nothing, and waits for the loading
        while the caller holds ``heir.lock``."""
        with self.lock:
            if self.refreshing or self._saved is None or self._saved[0] != self.version:
                return None
            self._heir = heir
            return self._saved[1]

    def _compact_bm25(self) -> None:
        """Fold BM25's documents into one segment (only when documents were added or removed since the last)."""
        if self.bm25.compact():
            # The merge read the stored segment through, and its columns are freed; without this their heap
            # pages stay resident.
            release_free_memory()
            self.release_mapped()
            self._postings_source = None

    def release_mapped(self) -> None:
        """Drop this process's pages of the files the index is served from (``SnapshotFile.release``): after
        a writing or a merge read them through, and when the questions' reading passes the session's budget
        (``Session.bound_mapped``). Safe while another thread reads them: what it reads next is mapped again."""
        for source in (self._served, self._postings_source):
            if source is not None:
                source.release()

    def _write(self, write: Callable[[SnapshotWriter], BinaryIO], target: Path | None, what: str,
               postings: bool = True) -> SnapshotFile | None:
        """Write a snapshot or a spill (``write``; ``postings``: with BM25's documents) to ``target`` (an
        anonymous file for None) and serve the chunks, references, imports (and BM25 segment) from it instead
        of what is held in memory; returns the file written. Failing costs only the writing (a warning: the index
        keeps what it holds, BM25's documents folded into one segment in memory), and None is returned."""
        writer = None
        try:
            # The files read from are read through as they are copied; their pages are dropped as the writing goes.
            writer = SnapshotWriter(target, self.release_mapped)
            with write(writer) as written:
                self.release_mapped()
                source = SnapshotFile(written)
                if postings:
                    # The segment written holds every live document: BM25 is served from it alone, at once, so
                    # that the documents held in memory are freed before the rest is read back.
                    self.bm25 = BM25Index(segment=snapshot.load_segment(source))
                    self._postings_source = source
                    # Reading it back checks its columns through; questions map again what they read.
                    source.release()
                chunks, references, imports = snapshot.reopen(source)
                source.release()
        except (OSError, SnapshotError) as exc:
            if writer is not None:
                writer.abort()
            if self.cache:
                self.cache.warn(f"{what} not written ({exc}); chunks stay in memory")
            if postings:
                self._compact_bm25()
            return None
        self._served = source
        # A spill: what is served is no longer the last save's snapshot (``save`` records it again after this).
        self._saved = None
        self.chunks.rebase(chunks)
        self.references = ReferenceMap(references)
        self.imports = ImportMap(imports)
        # What the file now serves is freed, and the merge's pieces were: without this their heap pages stay
        # resident (a server on Django kept 68 MB more).
        release_free_memory()
        return source

    def _spill_if_large(self) -> None:
        """Mid-refresh: move the chunks, references and imports held as objects into a file once they are many.

        The file is a spill (``snapshot.spill``), not the cache's snapshot: a
        snapshot would also write the definitions and links, for a file no warm
        start would load before the refresh's own last save. BM25's documents
        go into it as well once ``SPILL_MAX_CHUNKS`` of them wait in memory,
        merged into one segment as they are written (the refresh's new
        documents come after the segment's, so the merge only appends), and
        BM25 is served from it: at 100,000 files the documents held until the
        last save were 45 million postings, and their merge the peak of the
        cold index's memory. Fewer wait for a later spill or the save: merging
        them at every spill of a smaller workspace only cost memory while the
        parse workers are alive (Django's cold peak with them, 378 → 403 MB).
        """
        live = len(self.chunks.live)
        if live >= SPILL_MIN_CHUNKS and (live * 2 >= len(self.chunks) or live >= SPILL_MAX_CHUNKS):
            postings = self.bm25.pending >= SPILL_MAX_CHUNKS
            with self.lock:
                self._write(lambda writer: snapshot.spill(self, writer, postings), None, "index spill", postings)

    # Queries over what is indexed.

    def chunks_of(self, path: str) -> list[tuple[int, Chunk]]:
        entry = self.files.get(path)
        return list(zip(entry.chunk_ids, self.chunks.many(entry.chunk_ids))) if entry else []

    def chunk_at(self, path: str, line: int) -> tuple[int, Chunk] | None:
        """The innermost chunk of a file that covers a 1-based line."""
        layout = self._layout(path)
        chunk_id = layout.innermost(line) if layout is not None else None
        return (chunk_id, self.chunks[chunk_id]) if chunk_id is not None else None

    def definition_chunk(self, definition: Definition) -> int | None:
        """The chunk that starts a definition (its signature and docstring), else the one holding its first line."""
        layout = self._layout(definition.path)
        if layout is None:
            return None
        found = layout.starting(definition.qualname, definition.start_line)
        return found if found is not None else layout.innermost(definition.start_line)

    def _layout(self, path: str) -> Layout | None:
        """The chunk layout of a file's current version (made on first use), or None for a file not indexed."""
        return LAYOUTS.get(self, path) if path in self.files else None

    def close(self) -> None:
        if self.cache:
            self.cache.close()
