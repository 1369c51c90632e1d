"""Parse workers (``file_work``): started without running the parent's main script again, and handed files only
a bounded way ahead of what they returned."""

import subprocess
import sys
import textwrap

from rag_lsp.index import file_work


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
