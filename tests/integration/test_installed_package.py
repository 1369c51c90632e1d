"""What users install is what is tested: the package built as an sdist and a wheel (``python -m build``, the
wheel made from the sdist), the wheel installed with its dependencies into a fresh virtual environment, and
each command run from there, away from the source tree.

pip's cache makes the install quick on a machine that has run it once; nothing is taken from the test
environment (no ``--system-site-packages``, no ``--no-deps``, no editable install).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import anyio
import pytest
from langservers_env import copy_polyglot
from mcp_harness import connected, server_parameters

REPO = Path(__file__).resolve().parents[2]


def _package_files() -> set[str]:
    """Every file of the package in the source tree, as a path inside the wheel (``rag_lsp/...``)."""
    package = REPO / "rag_lsp"
    return {path.relative_to(REPO).as_posix() for path in package.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)], check=True,
                   capture_output=True, text=True, timeout=600)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return wheel, sdist


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory) -> Path:
    """The ``bin`` directory of a fresh virtual environment with the wheel and its ``mcp`` extra installed."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-compile",
                    "--disable-pip-version-check", f"{built[0]}[mcp]"],
                   check=True, capture_output=True, text=True, timeout=900)
    return venv / "bin"


def _clean_env(tmp: Path) -> dict[str, str]:
    """No PYTHONPATH, no virtual environment of ours, the cache in a temporary directory."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["RAG_LSP_CACHE_DIR"] = str(tmp / "cache")
    return env


def test_the_wheel_and_the_sdist_hold_every_query_data_file_and_the_typing_marker(built):
    wheel, sdist = built
    expected = _package_files()
    assert {"rag_lsp/py.typed", "rag_lsp/queries/_ecmascript/tags.scm", "rag_lsp/data/languages.toml"} <= expected
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = {name for name in archive.namelist() if name.startswith("rag_lsp/")}
        entry_points = archive.read(next(n for n in archive.namelist() if n.endswith("entry_points.txt"))).decode()
    assert in_wheel == expected
    assert "rag-lsp = rag_lsp.cli:main" in entry_points
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert expected <= in_sdist and {"pyproject.toml", "README.md"} <= in_sdist, top


def test_the_installed_commands_run_away_from_the_source_tree(installed, tmp_path):
    root = copy_polyglot(tmp_path / "polyglot")
    env = _clean_env(tmp_path)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()

    def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(installed / "rag-lsp"), *args], cwd=cwd, env=env, input=stdin,
                              capture_output=True, timeout=300, check=False)

    where = subprocess.run([str(installed / "python"), "-c", "import rag_lsp; print(rag_lsp.__file__)"],
                           cwd=cwd, env=env, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(installed.parent) and str(REPO) not in where.stdout

    index = run("index", str(root), "--json")
    assert index.returncode == 0, index.stderr
    stats = json.loads(index.stdout)
    # Every language's queries loaded from the installed package: each file parsed, none with errors.
    assert stats["files"] == 15 and stats["parse_errors"] == 0 and stats["definitions"] > 40
    assert {"python", "typescript", "go", "rust"} <= set(stats["languages"])

    context = run("context", "why does `RateLimiter.allow` let every request through", "--root", str(root),
                  "--json", "--top-k", "5")
    assert context.returncode == 0, context.stderr
    paths = {item["path"] for item in json.loads(context.stdout)["items"]}
    assert {"scripts/limits/rate_limiter.py", "client/src/rateLimiter.ts"} <= paths

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "rootUri": root.as_uri()}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    frames = b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                      for body in (json.dumps(message).encode() for message in messages))
    serve = run("serve", "--log-file", str(tmp_path / "serve.log"), stdin=frames)
    assert serve.returncode == 0, serve.stderr
    responses = [json.loads(part[: part.rindex(b"}") + 1]) for part in serve.stdout.split(b"\r\n\r\n")[1:]]
    by_id = {response.get("id"): response for response in responses}
    assert by_id[1]["result"]["serverInfo"]["name"] == "rag-lsp" and by_id[2]["result"] is None

    async def list_tools() -> list[str]:
        parameters = server_parameters([root], tmp_path / "cache", env={"PATH": env["PATH"]}, cwd=cwd,
                                       extra=("--no-language-servers",), command=str(installed / "rag-lsp"))
        async with connected(parameters) as client:
            return sorted(tool.name for tool in (await client.list_tools()).tools)

    assert anyio.run(list_tools) == ["completion_context", "context", "lookup", "status"]
