"""Parse workers (``file_work.start_workers``) start without running the parent's main script again."""

import subprocess
import sys
import textwrap


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
            found = pool.submit(analyse_encoded, ("a.py", "def f():\\n    return 1\\n", "0" * 40)).result()
            pool.shutdown()
            assert sys.modules["__main__"] is main
            assert found[0] == "0" * 40 and found[1]
    """))
    done = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert marks.read_text().split() == ["__main__"]
