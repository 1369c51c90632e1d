"""Planning: which server serves each language, from the defaults, PATH and the user's overrides."""

from __future__ import annotations

import os

import pytest

from rag_lsp.langservers.spec import ServerSpec, language_id, plan_servers, resolve_command

from .lsp_helpers import executable


def test_commands_resolve_on_path_then_next_to_the_running_python(bin_dir, tmp_path):
    on_path = executable(bin_dir, "gopls")
    in_venv = executable(tmp_path / "venv" / "bin", "jedi-language-server")
    assert resolve_command("gopls") == on_path
    assert resolve_command("jedi-language-server") == in_venv
    assert resolve_command("clangd") is None


def test_paths_are_checked_directly(bin_dir, tmp_path, monkeypatch):
    server = executable(tmp_path / "tools", "my-server")
    (tmp_path / "tools" / "not-executable").write_text("")
    monkeypatch.chdir(tmp_path)
    assert resolve_command(server) == server
    assert resolve_command("tools/my-server") == server
    assert os.path.isabs(resolve_command("./tools/my-server"))
    assert resolve_command("tools/not-executable") is None
    assert resolve_command(str(tmp_path / "tools" / "missing")) is None
    assert resolve_command(str(tmp_path / "tools")) is None


@pytest.mark.parametrize(
    ("language", "path", "expected"),
    [
        ("python", "a/b.py", "python"),
        ("typescript", "a.ts", "typescript"),
        ("tsx", "a.tsx", "typescriptreact"),
        ("javascript", "a.js", "javascript"),
        ("javascript", "App.JSX", "javascriptreact"),
        ("go", "main.go", "go"),
        ("c", "x.h", "c"),
        ("cpp", "x.cc", "cpp"),
        ("rust", "lib.rs", "rust"),
        ("ruby", "x.rb", "ruby"),
    ],
)
def test_language_ids(language, path, expected):
    assert language_id(language, path) == expected


def test_defaults_share_one_server_per_family_and_explain_what_is_missing(bin_dir):
    pyright = executable(bin_dir, "pyright-langserver")
    tsls = executable(bin_dir, "typescript-language-server")
    clangd = executable(bin_dir, "clangd")
    plan = plan_servers({})
    assert list(plan) == ["python", "javascript", "typescript", "tsx", "go", "rust", "c", "cpp"]
    # pyright loads its project right after it starts (warm_up); tsserver loads it for the first open file.
    assert plan["python"] == ServerSpec("pyright", pyright, ("--stdio",), None, ("python",), warm_up=True)
    typescript = plan["javascript"]
    assert typescript == ServerSpec(
        "typescript-language-server", tsls, ("--stdio",),
        {"disableAutomaticTypingAcquisition": True, "tsserver": {"useSyntaxServer": "never"}},
        ("javascript", "typescript", "tsx"),
    )
    assert plan["typescript"] is typescript and plan["tsx"] is typescript
    assert plan["c"] is plan["cpp"] and plan["c"].languages == ("c", "cpp") and plan["c"].command == clangd
    assert plan["go"] == "no go language server on PATH (tried gopls)"
    assert plan["rust"] == "no rust language server on PATH (tried rust-analyzer)"


def test_python_falls_back_through_its_candidates(bin_dir):
    assert plan_servers({})["python"] == (
        "no python language server on PATH (tried pyright-langserver, basedpyright-langserver, jedi-language-server)"
    )
    executable(bin_dir, "jedi-language-server")
    assert plan_servers({})["python"].name == "jedi-language-server"
    assert plan_servers({})["python"].args == ()
    executable(bin_dir, "basedpyright-langserver")
    assert plan_servers({})["python"].name == "basedpyright"
    assert plan_servers({})["python"].args == ("--stdio",)


def test_overrides_disable_replace_or_adjust_a_language(bin_dir, tmp_path):
    executable(bin_dir, "pyright-langserver")
    executable(bin_dir, "gopls")
    custom = executable(tmp_path / "opt", "my-go-server")
    plan = plan_servers(
        {
            "python": {"enabled": False},
            "go": {"command": custom, "args": ["serve", "-v"], "initialization_options": {"x": 1}},
            "c": {"command": "no-such-server"},
            "cpp": {"args": ["--log=verbose"], "enabled": True},
        }
    )
    assert plan["python"] == "disabled by settings"
    assert plan["go"] == ServerSpec("my-go-server", custom, ("serve", "-v"), {"x": 1}, ("go",))
    assert plan["c"] == "command 'no-such-server' not found"
    assert plan["cpp"] == "no cpp language server on PATH (tried clangd)"


def test_a_configured_known_command_keeps_its_default_arguments(bin_dir, tmp_path):
    pyright = executable(tmp_path / "elsewhere", "pyright-langserver")
    plan = plan_servers({"python": {"command": pyright}})
    assert plan["python"] == ServerSpec("pyright-langserver", pyright, ("--stdio",), None, ("python",), warm_up=True)
    plan = plan_servers({"python": {"command": pyright, "args": []}})
    assert plan["python"].args == ()


def test_languages_share_a_process_only_when_everything_matches(bin_dir):
    executable(bin_dir, "clangd")
    executable(bin_dir, "typescript-language-server")
    plan = plan_servers({"cpp": {"initialization_options": {"fallbackFlags": ["-std=c++20"]}},
                         "tsx": {"initialization_options": None, "args": None}})  # fmt: skip
    assert plan["c"].languages == ("c",)
    assert plan["cpp"].languages == ("cpp",)
    assert plan["cpp"].initialization_options == {"fallbackFlags": ["-std=c++20"]}
    assert plan["tsx"] is plan["javascript"]


def test_a_language_without_defaults_needs_a_command(bin_dir, tmp_path):
    marksman = executable(tmp_path / "opt", "marksman")
    assert plan_servers({"markdown": {"enabled": True}})["markdown"] == "no server configured for markdown"
    plan = plan_servers({"markdown": {"command": marksman, "args": ["server"]}})
    assert plan["markdown"] == ServerSpec("marksman", marksman, ("server",), None, ("markdown",))
    assert list(plan)[-1] == "markdown"
