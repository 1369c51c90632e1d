"""Measure embedding per backend: chunks per second, the model's memory, and the vectors' memory.

Each backend embeds the same chunks (``chunk_text`` of every chunk of one
indexed tree, the text the index embeds) in batches of ``DenseConfig.batch``,
on one thread, after one warm-up batch; nothing is read from the vector cache.
Memory is the process's resident set (``/proc/self/statm``) before and after
loading the model, and the vectors' bytes in the store. Each backend runs in its
own process, so one model's memory does not count against the next.

Backends: ``wordllama`` (its bundled weights); ``model2vec`` with a model built
here from wordllama's tokenizer and random vectors of the same shape (no code
model ships in a wheel, and none may be downloaded: the rate and memory of the
backend are measured, not its quality); ``model2vec:DIR`` for a real model
directory when you have one.

With ``--cost``, it also asks Semble's questions about the tree (``--questions``)
with each knob value and with wordllama's vectors, and reports the mean of
what each answer's ``retrieval`` says it cost (the knob's own milliseconds,
passes, variants; the dense side's milliseconds) and the mean time of the whole
answer, warm (each question asked once before).

Run:
    .venv/bin/python bench/embed_bench.py [--tree /work/benchtrees/semble/fastapi__fastapi] [--backend ...]
        [--cost --questions /work/shared/bench/semble/annotations/fastapi.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import machine_line, table

# The folder Semble's benchmark indexes in FastAPI's checkout.
DEFAULT_TREE = Path("/work/benchtrees/semble/fastapi__fastapi/fastapi")
PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * PAGE


def random_model2vec(directory: Path) -> None:
    """A model2vec model with wordllama's tokenizer and random 256-dimension vectors (speed and memory only)."""
    import numpy as np
    import wordllama
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    config = json.loads((Path(str(wordllama.__file__)).parent / "tokenizers" /
                         "l2_supercat_tokenizer_config.json").read_text())
    tokenizer = Tokenizer.from_str(json.dumps(config)) if "model" in config else None
    if tokenizer is None:
        raise SystemExit("wordllama's tokenizer file is not a tokenizers JSON; give --backend model2vec:DIR")
    vectors = np.random.default_rng(0).normal(size=(tokenizer.get_vocab_size(), 256)).astype(np.float32)
    StaticModel(vectors, tokenizer, normalize=True).save_pretrained(directory)


def measure(spec: str, tree: Path, limit: int) -> dict:
    """One backend, in this process."""
    from rag_lsp.index.root_index import Index
    from rag_lsp.index.vectors.embedders import DenseConfig, load
    from rag_lsp.index.vectors.embedding import chunk_text
    from rag_lsp.index.vectors.vector_store import VectorStore

    index = Index(tree, use_cache=True, cache_root=Path("/work/benchtrees/cache"))
    index.refresh()
    texts = [chunk_text(chunk, True) for _, chunk in sorted(index.chunks.items())][:limit]
    backend, _, model = spec.partition(":")
    if backend == "model2vec" and not model:
        model = tempfile.mkdtemp(prefix="m2v-random-")
        random_model2vec(Path(model))
    config = DenseConfig(backend=backend, model=model or None)
    before = resident_bytes()
    started = time.perf_counter()
    embedder = load(config)
    load_s = time.perf_counter() - started
    embedder.documents(texts[: config.batch])
    model_bytes = resident_bytes() - before
    started = time.perf_counter()
    rows = [embedder.documents(texts[start:start + config.batch]) for start in range(0, len(texts), config.batch)]
    elapsed = time.perf_counter() - started
    store = VectorStore(rows[0].shape[1], config.ann_threshold)
    for start, vectors in zip(range(0, len(texts), config.batch), rows):
        store.add(list(range(start, start + len(vectors))), vectors)
    return {"backend": spec,
            "identity": embedder.identity, "chunks": len(texts), "dim": store.dim,
            "mean_chars": sum(map(len, texts)) / len(texts), "load_s": load_s, "chunks_per_s": len(texts) / elapsed,
            "model_mb": model_bytes / 2**20, "vectors_mb": len(texts) * store.dim * 4 / 2**20,
            "per_100k_mb": 100_000 * store.dim * 4 / 2**20}


def knob_costs(tree: Path, questions: Path) -> list[list[object]]:
    """Mean reported cost per question of each knob setting, and of the dense side."""
    import statistics

    from common import Enhanced, enhancements_for

    from rag_lsp.index.root_index import Index
    from rag_lsp.index.vectors.embedders import DenseConfig
    from rag_lsp.retrieval.answer import ContextRequest
    from rag_lsp.retrieval.retrieve import retrieve

    asked = [question["query"] for question in json.loads(questions.read_text())]
    index = Index(tree, cache_root=Path("/work/benchtrees/cache"))
    index.refresh()
    systems = [("default (expand 1, rerank)", Enhanced(), "expand"),
               ("expand 0", Enhanced(knobs=(("expand", 0),)), "expand"),
               ("expand 2", Enhanced(knobs=(("expand", 2),)), "expand"),
               ("expand 3", Enhanced(knobs=(("expand", 3),)), "expand"),
               ("rerank false", Enhanced(knobs=(("rerank", False),)), "rerank"),
               ("wordllama rrf", Enhanced(dense=DenseConfig(backend="wordllama")), "dense")]
    rows = []
    for label, system, knob in systems:
        enhancements = enhancements_for(index, system)
        totals, own, passes, variants = [], [], [], []
        for question in asked:
            retrieve(index, ContextRequest(question), enhancements=enhancements)
            started = time.perf_counter()
            answer = retrieve(index, ContextRequest(question), enhancements=enhancements)
            totals.append((time.perf_counter() - started) * 1000)
            report = answer.retrieval
            assert report is not None
            if knob == "dense":
                own.append(report.dense_ms)
                continue
            entry = next(k for k in report.knobs if k.name == knob)
            own.append(entry.ms or 0.0)
            passes.append(entry.passes)
            variants.append(entry.variants)
        rows.append([label, len(asked), f"{statistics.mean(totals):.1f}", f"{statistics.mean(own):.2f}",
                     f"{statistics.mean(passes):.2f}" if passes else "", f"{statistics.mean(variants):.2f}"
                     if variants else ""])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=DEFAULT_TREE)
    parser.add_argument("--backend", action="append", default=[], metavar="BACKEND[:MODEL]")
    parser.add_argument("--limit", type=int, default=5000, help="chunks embedded at most")
    parser.add_argument("--cost", action="store_true", help="also measure each knob's reported cost per question")
    parser.add_argument("--questions", type=Path,
                        default=Path("/work/shared/bench/semble/annotations/fastapi.json"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.tree, args.limit)))
        return
    if args.cost:
        rows = knob_costs(args.tree, args.questions)
        print(machine_line(f"Cost per question of each knob, {args.tree.name}, {args.questions.name}") + "\n")
        print(table(["setting", "questions", "answer ms (mean)", "own ms (mean, as reported)", "passes (mean)",
                     "variants (mean)"], rows) + "\n")
    rows = []
    for spec in args.backend or ["wordllama", "model2vec"]:
        done = subprocess.run([sys.executable, __file__, "--child", spec, "--tree", str(args.tree),
                               "--limit", str(args.limit)], capture_output=True, text=True, check=False)
        if done.returncode:
            print(f"{spec}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
            continue
        found = json.loads(done.stdout.strip().splitlines()[-1])
        label = spec if spec != "model2vec" else "model2vec (random vectors, wordllama's tokenizer)"
        rows.append([label, found["dim"], found["chunks"], round(found["mean_chars"]), f"{found['load_s']:.2f}",
                     f"{found['chunks_per_s']:.0f}", f"{found['model_mb']:.0f}", f"{found['vectors_mb']:.1f}",
                     f"{found['per_100k_mb']:.0f}"])
    print(machine_line(f"Embedding rate and memory, {args.tree.name}") + "\n")
    print(table(["backend", "dim", "chunks", "mean chars", "load s", "chunks/s", "model MB (RSS)", "vectors MB",
                 "vectors MB per 100k chunks"], rows))


if __name__ == "__main__":
    main()
