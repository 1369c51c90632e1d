"""A proof of a shared index in PostgreSQL with a local overlay of unsaved edits on top (docs/scaling.md).

PostgreSQL runs from the ``pgserver`` wheel (PostgreSQL 16 with pgvector in a wheel), installed with
``psycopg`` into a throwaway virtualenv outside the project, never into the project's dependencies:

    /work/main/.venv/bin/python -m venv /work/benchtrees/scale/venv
    /work/benchtrees/scale/venv/bin/pip install pgserver "psycopg[binary]"
    PYTHONPATH=.:/work/benchtrees/scale/venv/lib/python3.11/site-packages \\
        .venv/bin/python bench/shared_index_postgres.py /work/benchtrees/perf/Django-5.1.4 \\
        --data /work/benchtrees/scale/pgdata --cache /work/benchtrees/scale/cache/proof

What it does, with timings:

1. index the tree with rag_lsp (``Index.refresh``, from its cache when warm);
2. load every chunk and its BM25 terms (``chunk_terms``, exactly what the local index holds) into tables
   ``chunks``, ``postings`` (term, chunk, tf) and ``terms`` (term, df), plus one row of corpus statistics;
3. score DJANGO_QUESTIONS with BM25 in SQL (the formula of ``rag_lsp/index/postings/bm25_index.py``, the idf floor
   included) and compare the top 10 with the local ``BM25Index.top_k`` of the same terms; then a pruned
   query (candidates from the rarer terms, re-scored with all) against that exact top 10;
4. push a saved file to the shared index (delete its chunks, insert the new ones, update df and the
   statistics, in one transaction) and read it from a second connection;
5. the overlay: an unsaved edit of ``django/db/models/query.py`` (a new method with a fresh word, one method
   deleted) is parsed locally and never sent. A query scores the shared index without the overlay's paths
   (they are shadowed), with the corpus statistics corrected by what the shadowed versions held and what the
   overlay holds, and scores the overlay's chunks locally with the same statistics; the two lists merge by
   score. The merged top 10 is compared with a local index that holds the edit (``Index.set_file``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
from latency import DJANGO_QUESTIONS, median_p95
from pgserver import get_server

from rag_lsp.index.file_work import analyse, chunk_terms
from rag_lsp.index.root_index import Index
from rag_lsp.index.terms import query_tokens

K1, B, EPSILON = 1.5, 0.75, 0.25
TOP = 10
EDITED = "django/db/models/query.py"
FRESH_WORD = "overlayonlymarker"

SCHEMA = """
DROP TABLE IF EXISTS postings, chunks, terms, stats;
CREATE TABLE chunks (id bigint PRIMARY KEY, path text NOT NULL, start_line int, end_line int, symbol text,
                     kind text, blob text, length int NOT NULL, content text NOT NULL);
CREATE TABLE postings (term text NOT NULL, chunk_id bigint NOT NULL, tf int NOT NULL, length int NOT NULL);
CREATE TABLE terms (term text PRIMARY KEY, df int NOT NULL);
CREATE TABLE stats (n bigint NOT NULL, total_len bigint NOT NULL, avg_idf float8 NOT NULL);
"""
INDEXES = """
CREATE INDEX postings_term ON postings (term) INCLUDE (chunk_id, tf, length);
CREATE INDEX postings_chunk ON postings (chunk_id);
CREATE INDEX chunks_path ON chunks (path);
"""
# The vocabulary's average idf (the floor of negative idfs), recomputed after every push.
REFRESH_STATS = """
UPDATE stats SET avg_idf = (SELECT avg(ln(stats.n - df + 0.5) - ln(df + 0.5)) FROM terms)
"""
# BM25 of the query terms over the shared chunks, except the shadowed paths' chunks (ids), with statistics corrected by
# what the shadowed versions held and the overlay holds: %(n)s, %(total_len)s and %(df_delta)s come from
# the overlay (0 and an empty map without one).
SEARCH = """
WITH q AS (SELECT unnest(%(terms)s::text[]) AS term),
s AS (SELECT n + %(dn)s AS n, (total_len + %(dlen)s)::float8 / (n + %(dn)s) AS avgdl, avg_idf FROM stats),
w AS (
  SELECT q.term, (SELECT CASE WHEN x < 0 THEN %(eps)s * s.avg_idf ELSE x END
                  FROM (SELECT ln(s.n - d + 0.5) - ln(d + 0.5) AS x) AS idf) AS idf
  FROM q JOIN terms t USING (term) CROSS JOIN s
  CROSS JOIN LATERAL (SELECT t.df + coalesce((%(df_delta)s::jsonb ->> q.term)::int, 0) AS d) AS corrected
),
top AS (
  SELECT p.chunk_id,
         sum(w.idf * p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.length / s.avgdl))) AS score
  FROM w JOIN postings p USING (term) CROSS JOIN s
  WHERE NOT (p.chunk_id = ANY(%(shadowed)s))
  GROUP BY p.chunk_id
  ORDER BY score DESC, p.chunk_id
  LIMIT %(k)s
)
SELECT top.chunk_id, c.path, c.start_line, top.score FROM top JOIN chunks c ON c.id = top.chunk_id
ORDER BY top.score DESC, top.chunk_id
"""

# Pruned: candidates from the query's rarer terms only (df at most RARE of N), the best DEPTH of them scored
# again with every term. Not exact (a chunk that only common terms rank high is missed): measured against the
# exact SEARCH.
PRUNED = """
WITH q AS (SELECT unnest(%(terms)s::text[]) AS term),
s AS (SELECT n, total_len::float8 / n AS avgdl, avg_idf FROM stats),
w AS (
  SELECT q.term, t.df, (SELECT CASE WHEN x < 0 THEN %(eps)s * s.avg_idf ELSE x END
                        FROM (SELECT ln(s.n - t.df + 0.5) - ln(t.df + 0.5) AS x) AS idf) AS idf
  FROM q JOIN terms t USING (term) CROSS JOIN s
),
candidates AS (
  SELECT p.chunk_id FROM w JOIN postings p USING (term) CROSS JOIN s
  WHERE w.df <= s.n * %(rare)s
  GROUP BY p.chunk_id
  ORDER BY sum(w.idf * p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.length / s.avgdl))) DESC
  LIMIT %(depth)s
),
top AS (
  SELECT p.chunk_id,
         sum(w.idf * p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.length / s.avgdl))) AS score
  FROM candidates JOIN postings p USING (chunk_id) JOIN w USING (term) CROSS JOIN s
  GROUP BY p.chunk_id
  ORDER BY score DESC, p.chunk_id
  LIMIT %(k)s
)
SELECT top.chunk_id, c.path, c.start_line, top.score FROM top JOIN chunks c ON c.id = top.chunk_id
ORDER BY top.score DESC, top.chunk_id
"""
RARE, DEPTH = 0.05, 1000


def timed(call, *args: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = call(*args)
    return result, (time.perf_counter() - started) * 1000


def load(conn: psycopg.Connection, index: Index) -> dict[str, float]:
    """Every chunk, its postings and the vocabulary into the shared tables; returns the seconds of each step."""
    began = time.perf_counter()
    df: Counter[str] = Counter()
    n = total = 0
    with conn.cursor() as cur:
        cur.execute(SCHEMA)
        postings: list[tuple[str, int, int, int]] = []
        with cur.copy("COPY chunks (id, path, start_line, end_line, symbol, kind, blob, length, content) FROM STDIN"
                      ) as copy:
            for path in sorted(index.files):
                for chunk_id, chunk in index.chunks_of(path):
                    terms = Counter(chunk_terms(chunk))
                    length = sum(terms.values())
                    copy.write_row((chunk_id, chunk.path, chunk.start_line, chunk.end_line, chunk.symbol,
                                    chunk.kind, chunk.blob_id, length, chunk.content.replace("\x00", "")))
                    postings.extend((term, chunk_id, tf, length) for term, tf in terms.items())
                    df.update(terms.keys())
                    n += 1
                    total += length
        with cur.copy("COPY postings (term, chunk_id, tf, length) FROM STDIN") as copy:
            for row in postings:
                copy.write_row(row)
        with cur.copy("COPY terms (term, df) FROM STDIN") as copy:
            for term, count in df.items():
                copy.write_row((term, count))
        cur.execute("INSERT INTO stats VALUES (%s, %s, 0)", (n, total))
        cur.execute(REFRESH_STATS)
        copied = time.perf_counter()
        cur.execute(INDEXES)
    return {"copy_s": copied - began, "indexes_s": time.perf_counter() - copied, "chunks": n,
            "postings": sum(df.values()), "terms": len(df)}


def search(conn: psycopg.Connection, terms: list[str], shadowed: tuple[int, ...] = (), dn: int = 0, dlen: int = 0,
           df_delta: dict[str, int] | None = None, k: int = TOP) -> list[tuple[int, str, int, float]]:
    import json

    with conn.cursor() as cur:
        cur.execute(SEARCH, {"terms": terms, "shadowed": list(shadowed), "dn": dn, "dlen": dlen,
                             "df_delta": json.dumps(df_delta or {}), "k": k, "k1": K1, "b": B, "eps": EPSILON})
        return [(int(r[0]), r[1], int(r[2]), float(r[3])) for r in cur.fetchall()]


def pruned_search(conn: psycopg.Connection, terms: list[str], k: int = TOP) -> list[tuple[int, str, int, float]]:
    """PRUNED, or the exact search when no query term is rare enough to give candidates."""
    with conn.cursor() as cur:
        cur.execute(PRUNED, {"terms": terms, "rare": RARE, "depth": DEPTH, "k": k, "k1": K1, "b": B, "eps": EPSILON})
        found = [(int(r[0]), r[1], int(r[2]), float(r[3])) for r in cur.fetchall()]
    return found or search(conn, terms, k=k)


def push(conn: psycopg.Connection, path: str, rows: list[tuple[int, Any, Counter[str]]]) -> None:
    """Replace one file's chunks in the shared index (what a CI job or a saving client does), in one transaction."""
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT p.term, count(*) FROM postings p JOIN chunks c ON c.id = p.chunk_id WHERE c.path = %s "
                    "GROUP BY p.term", (path,))
        old = dict(cur.fetchall())
        cur.execute("SELECT count(*), coalesce(sum(length), 0) FROM chunks WHERE path = %s", (path,))
        old_n, old_len = cur.fetchone() or (0, 0)
        cur.execute("DELETE FROM postings WHERE chunk_id IN (SELECT id FROM chunks WHERE path = %s)", (path,))
        cur.execute("DELETE FROM chunks WHERE path = %s", (path,))
        new: Counter[str] = Counter()
        with cur.copy("COPY chunks (id, path, start_line, end_line, symbol, kind, blob, length, content) FROM STDIN"
                      ) as copy:
            for chunk_id, chunk, terms in rows:
                copy.write_row((chunk_id, chunk.path, chunk.start_line, chunk.end_line, chunk.symbol, chunk.kind,
                                chunk.blob_id, sum(terms.values()), chunk.content))
                new.update(terms.keys())
        with cur.copy("COPY postings (term, chunk_id, tf, length) FROM STDIN") as copy:
            for chunk_id, _, terms in rows:
                for term, tf in terms.items():
                    copy.write_row((term, chunk_id, tf, sum(terms.values())))
        delta = {t: new.get(t, 0) - old.get(t, 0) for t in set(old) | set(new)}
        changed = [(t, d) for t, d in delta.items() if d]
        cur.execute("INSERT INTO terms SELECT * FROM unnest(%s::text[], %s::int[]) ON CONFLICT (term) DO UPDATE "
                    "SET df = terms.df + EXCLUDED.df", ([t for t, _ in changed], [d for _, d in changed]))
        cur.execute("DELETE FROM terms WHERE df <= 0")
        cur.execute("UPDATE stats SET n = n - %s + %s, total_len = total_len - %s + %s",
                    (old_n, len(rows), old_len, sum(sum(terms.values()) for _, _, terms in rows)))
        cur.execute(REFRESH_STATS)


def overlay_rows(path: str, text: str, first_id: int) -> list[tuple[int, Any, Counter[str]]]:
    """An unsaved buffer parsed locally: its chunks and their terms, with ids past the shared ones."""
    parsed, terms = analyse(path, text)
    return [(first_id + i, chunk, Counter(chunk_terms_)) for i, (chunk, chunk_terms_) in
            enumerate(zip(parsed.chunks, terms, strict=True))]


def merged_search(conn: psycopg.Connection, terms: list[str], overlay: dict[str, list[tuple[int, Any, Counter[str]]]],
                  shadow: dict[str, tuple[tuple[int, ...], int, dict[str, int]]], k: int = TOP) -> list[tuple[int, str, int, float]]:
    """The shared index without the overlay's paths plus the overlay's chunks, on one set of statistics."""
    dn = dlen = 0
    df_delta: Counter[str] = Counter()
    shadowed: list[int] = []
    for path, rows in overlay.items():
        old_ids, old_len, old_df = shadow[path]
        shadowed.extend(old_ids)
        dn += len(rows) - len(old_ids)
        dlen += sum(sum(t.values()) for _, _, t in rows) - old_len
        for term in terms:
            df_delta[term] += sum(1 for _, _, t in rows if term in t) - old_df.get(term, 0)
    shared = search(conn, terms, tuple(shadowed), dn, dlen, dict(df_delta), k)
    with conn.cursor() as cur:
        cur.execute("SELECT n + %s, (total_len + %s)::float8 / (n + %s), avg_idf FROM stats", (dn, dlen, dn))
        n, avgdl, avg_idf = cur.fetchone() or (0, 0.0, 0.0)
        cur.execute("SELECT term, df FROM terms WHERE term = ANY(%s)", (terms,))
        df = {t: d + df_delta[t] for t, d in cur.fetchall()}
    for term in terms:
        df.setdefault(term, df_delta[term])
    local = []
    for rows in overlay.values():
        for chunk_id, chunk, counts in rows:
            score, matched = 0.0, False
            for term in terms:
                tf = counts.get(term, 0)
                if not tf or df[term] <= 0:
                    continue
                matched = True
                idf = math.log(n - df[term] + 0.5) - math.log(df[term] + 0.5)
                idf = EPSILON * avg_idf if idf < 0 else idf
                length = sum(counts.values())
                score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avgdl))
            if matched:
                local.append((chunk_id, chunk.path, chunk.start_line, score))
    return sorted(shared + local, key=lambda r: (-r[3], r[0]))[:k]


def shadow_of(conn: psycopg.Connection, path: str) -> tuple[tuple[int, ...], int, dict[str, int]]:
    """What the shared index holds for ``path``: its chunks' ids, their tokens, and the df each term owes to it."""
    with conn.cursor() as cur:
        cur.execute("SELECT id, length FROM chunks WHERE path = %s", (path,))
        found = cur.fetchall()
        ids, length = tuple(int(r[0]) for r in found), sum(int(r[1]) for r in found)
        cur.execute("SELECT p.term, count(*) FROM postings p JOIN chunks c ON c.id = p.chunk_id WHERE c.path = %s "
                    "GROUP BY p.term", (path,))
        return ids, length, {t: int(c) for t, c in cur.fetchall()}


def places(index: Index, top: list[tuple[int, float]]) -> list[tuple[str, int]]:
    return [(index.chunks[i].path, index.chunks[i].start_line) for i, _ in top]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--data", type=Path, default=Path("/work/benchtrees/scale/pgdata"))
    parser.add_argument("--cache", type=Path, default=Path("/work/benchtrees/scale/cache/proof"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    out: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        out.append(line)

    index = Index(args.root, cache_root=args.cache)
    stats, ms = timed(index.refresh)
    say(f"rag_lsp index: {stats.files} files, {stats.chunks} chunks in {ms / 1000:.1f} s "
        f"({stats.parsed} parsed, {stats.reused} from the cache)")
    server, ms = timed(lambda: get_server(args.data, cleanup_mode="stop"))
    say(f"PostgreSQL started (pgserver) in {ms / 1000:.1f} s: "
        f"{server.psql('SHOW server_version;').splitlines()[2].strip()}")
    uri = server.get_uri()
    # Autocommit: each statement, or each ``transaction()`` block, commits on its own, as for separate clients.
    with psycopg.connect(uri, autocommit=True) as conn, psycopg.connect(uri, autocommit=True) as other:
        with conn.transaction():
            loaded = load(conn, index)
        with conn.cursor() as cur:
            started = time.perf_counter()
            cur.execute("ANALYZE")
            loaded["indexes_s"] += time.perf_counter() - started
            cur.execute("SELECT pg_size_pretty(pg_database_size(current_database()))")
            size = (cur.fetchone() or ("?",))[0]
        say(f"loaded {loaded['chunks']} chunks, {loaded['postings']} postings, {loaded['terms']} terms: "
            f"COPY {loaded['copy_s']:.1f} s, indexes and ANALYZE {loaded['indexes_s']:.1f} s; database {size}")

        # 3. The same BM25, in SQL and locally.
        sql_ms, local_ms, same_top, same_set = [], [], 0, 0
        pruned_ms, pruned_same = [], 0
        for _ in range(args.repeats):
            for question in DJANGO_QUESTIONS:
                terms = query_tokens(question)
                shared, elapsed = timed(search, conn, terms)
                sql_ms.append(elapsed)
                with index.lock:
                    local, elapsed = timed(index.bm25.top_k, terms, TOP)
                local_ms.append(elapsed)
                same_top += [r[0] for r in shared] == [i for i, _ in local]
                same_set += all(abs(a[3] - b) < 1e-6 for a, (_, b) in zip(shared, local, strict=False))
                pruned, elapsed = timed(pruned_search, conn, terms)
                pruned_ms.append(elapsed)
                pruned_same += [r[0] for r in pruned] == [r[0] for r in shared]
        asked = len(sql_ms)
        say(f"BM25 top {TOP} of {asked} questions: SQL {median_p95(sql_ms)} ms (p50 / p95), local BM25Index "
            f"{median_p95(local_ms)} ms; same chunks in the same order {same_top}/{asked}, same scores {same_set}/{asked}")
        say(f"pruned SQL (candidates from terms in at most {RARE:.0%} of chunks, best {DEPTH} re-scored): "
            f"{median_p95(pruned_ms)} ms; the exact top {TOP} in the same order {pruned_same}/{asked}")

        # 4. A saved file pushed to the shared index, seen by another client.
        path = EDITED
        original = (args.root / path).read_text(encoding="utf-8")
        saved = original + "\n\ndef pushed_helper_for_the_shared_index():\n    return 'pushedsharedmarker'\n"
        first_id = 10_000_000
        rows = overlay_rows(path, saved, first_id)
        _, ms = timed(push, conn, path, rows)
        seen = search(other, ["pushedsharedmarker"])
        say(f"push of {path} ({len(rows)} chunks) in one transaction: {ms:.0f} ms; a second connection finds the "
            f"new chunk: {bool(seen) and seen[0][1] == path}")
        _, ms = timed(push, conn, path, overlay_rows(path, original, first_id + 1000))
        say(f"push back of the original: {ms:.0f} ms")

        # 5. An unsaved edit as a local overlay on top of the shared index.
        lines = original.splitlines(keepends=True)
        start = next(i for i, line in enumerate(lines) if line.startswith("    def iterator("))
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("    def "))
        removed = "".join(lines[start:end])
        edited = "".join(lines[:start]) + (
            f"    def refund_everything(self):\n        \"\"\"{FRESH_WORD}: refund every row.\"\"\"\n"
            "        return [row.refund() for row in self]\n\n") + "".join(lines[end:])
        overlay = {path: overlay_rows(path, edited, 20_000_000)}
        shadow = {path: shadow_of(conn, path)}
        truth = Index(args.root, cache_root=args.cache)
        truth.refresh()
        truth.set_file(path, edited)
        checks = [[FRESH_WORD], query_tokens("iterator chunk_size prefetch chunked fetch")]
        checks += [query_tokens(q) for q in DJANGO_QUESTIONS]
        merged_ms, agree = [], 0
        for terms in checks:
            merged, elapsed = timed(merged_search, conn, terms, overlay, shadow)
            merged_ms.append(elapsed)
            with truth.lock:
                expected = places(truth, truth.bm25.top_k(terms, TOP))
            agree += [(p, line) for _, p, line, _ in merged] == expected
        fresh = merged_search(conn, [FRESH_WORD], overlay, shadow)
        gone = merged_search(conn, query_tokens("iterator chunk_size"), overlay, shadow, k=50)
        say(f"overlay: {path} edited in the buffer only (method iterator() removed, {len(removed.splitlines())} lines; "
            f"refund_everything() added): the fresh word's first place is the overlay's chunk "
            f"{fresh[:1] and (fresh[0][1], fresh[0][2])}; shared chunks of the file in the top 50 for "
            f"'iterator chunk_size': {sum(1 for r in gone if r[0] < 20_000_000 and r[1] == path)} (shadowed); "
            f"merged top {TOP} equals a local index holding the edit for {agree}/{len(checks)} queries; "
            f"merged query {median_p95(merged_ms)} ms")
    print("\n".join(out), file=sys.stderr)


if __name__ == "__main__":
    main()
