"""Parse workers (``file_work``): started without running the parent's main script again, and handed files only
a bounded way ahead of what they returned."""

import subprocess
import sys
import textwrap

from rag_lsp.index import file_work
from rag_lsp.index.cache import decode


def test_parse_workers_do_not_run_the_main_script_again(tmp_path):
    marks = tmp_path / "marks.txt"
    script = tmp_path / "main_script.py"
    # The script records each time it runs, as multiprocessing would run it in every process it starts.
    script.write_text(textwrap.dedent(f"""
        import os
        import sys
        from pathlib import Path

        with Path({str(marks)!r}).open("a") as out:
            out.write(__name__ + "\\n")

        from rag_lsp.index.file_work import analyse_encoded, start_workers

        if __name__ == "__main__":
            # Two workers whatever the machine: one core would start none.
            os.cpu_count = lambda: 2
            main = sys.modules["__main__"]
            pool = start_workers()
            found = pool.submit(analyse_encoded, "a.py", "def f():\\n    return 1\\n", "0" * 40).result()
            pool.shutdown()
            assert sys.modules["__main__"] is main
            assert found[0] == "0" * 40 and found[1]
    """))
    done = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert marks.read_text().split() == ["__main__"]


def test_the_workers_are_handed_files_only_as_far_as_the_bound_ahead_of_what_returned(monkeypatch):
    monkeypatch.setattr(file_work, "WORKERS_AHEAD_BYTES", 100)
    pulled: list[int] = []

    def work():
        for number in range(200):
            pulled.append(number)
            yield f"m{number}.py", f"def f{number}():\n    return {number}\n", f"{number:040x}", 10, number

    # Two real workers whatever the machine (one core would start none).
    monkeypatch.setattr(file_work.os, "cpu_count", lambda: 2)
    pool = file_work.start_workers()
    assert pool is not None
    with pool:
        returned = []
        for path, size, mtime, blob, payload in file_work.analyse_in(pool, work()):
            # At most the bound's worth of files past this one, rounded up to the chunk that crossed it.
            assert len(pulled) <= len(returned) + 1 + 100 // 10 + file_work.WORKER_CHUNK
            returned.append((path, size, mtime, blob))
            assert payload
    assert returned == [(f"m{number}.py", 10, number, f"{number:040x}") for number in range(200)]


def test_names_parsed_in_different_workers_are_one_string_in_the_main_process(monkeypatch):
    source = "class Ledger:\n    def post(self, entry):\n        return convert(entry)\n"
    monkeypatch.setattr(file_work.os, "cpu_count", lambda: 2)
    pool = file_work.start_workers()
    assert pool is not None
    with pool:
        # Each file in a task of its own, so that no payload shares a string with another by being sent with it.
        results = [pool.submit(file_work.analyse_encoded, f"{name}.py", source, f"{number:040x}")
                   for number, name in enumerate(["a", "b"])]
        first, second = (decode(f"{name}.py", future.result()[0], 10, 0, future.result()[1]).parsed
                         for name, future in zip(["a", "b"], results, strict=True))
    assert [d.qualname for d in first.definitions] == ["Ledger", "Ledger.post"]
    for one, other in zip(first.definitions, second.definitions, strict=True):
        assert one.name is other.name and one.qualname is other.qualname and one.kind is other.kind
    assert [r.name for r in first.references] == [r.name for r in second.references] != []
    for one, other in zip(first.references, second.references, strict=True):
        assert one.name is other.name and one.kind is other.kind
