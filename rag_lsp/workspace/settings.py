"""Settings: defaults, the client's settings and the operator file ``.rag-lsp.toml``.

Sources, from weakest to strongest: the defaults, the client's settings
(``initializationOptions``, then ``workspace/didChangeConfiguration``), and
the operator file at a workspace root, which wins because whoever runs
rag_lsp for a project decides what it may read and where its cache goes.

Keys may be written camelCase (editor settings) or snake_case (TOML). An
unknown key is reported by name and ignored; an invalid value rejects the
whole update so the previous valid settings stay in force.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import cast

from rag_lsp import languages
from rag_lsp.retrieval.enhance.knobs import KnobError, KnobValue, knob_map
from rag_lsp.retrieval.enhance.retrieval_config import ConfigError, RetrievalSettings, parse
from rag_lsp.retrieval.ranking.config import DEFAULT_RANKING, RankingConfig, ranking_from_settings

OPERATOR_FILE = ".rag-lsp.toml"
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])([A-Z])")


class SettingsError(ValueError):
    """Settings that cannot be applied, with a message naming the key and the problem."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a user or operator can set; see docs/protocol.md for each key."""

    budget_tokens: int = 4000
    top_k: int = 10
    ignore: tuple[str, ...] = ()
    languages: dict[str, bool] = field(default_factory=dict)
    cache_dir: str | None = None
    max_file_bytes: int = 1 << 20
    # Budgets of one root's index: files, bytes of indexed text, and seconds of one refresh (0: none).
    max_index_files: int = 200_000
    max_index_bytes: int = 2 << 30
    max_index_seconds: int = 0
    # Per language: {"command", "args", "initialization_options", "enabled"} (snake_case, validated).
    language_servers: dict[str, dict] = field(default_factory=dict)
    language_server_timeout_ms: int = 1500
    language_server_calls: int = 4
    # All server calls of one question together; when spent, the patterns answer the rest.
    language_server_budget_ms: int = 500
    # The ranking stack's switches and weights (``[ranking]`` in the operator file).
    ranking: RankingConfig = DEFAULT_RANKING
    # How long a question asked before the first index is complete waits for it (0: answer at once, partially).
    first_index_wait_ms: int = 2000
    # Dense vectors, their fusion, a language model, and the operator's bounds on the enhancement knobs.
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    # The client's values of the enhancement knobs (``expand``, ``hyde``, ``rerank``).
    enhancements: dict[str, KnobValue] = field(default_factory=dict)

    def disabled_languages(self) -> frozenset[str]:
        return frozenset(name for name, enabled in self.languages.items() if not enabled)


KNOWN_KEYS = tuple(f.name for f in fields(Settings))


def snake_case(key: str) -> str:
    return _CAMEL_BOUNDARY.sub(r"_\1", key).lower()


def camel_case(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def apply_settings(base: Settings, raw: object, overlay: bool = False) -> tuple[Settings, list[str]]:
    """``base`` updated with ``raw`` (a mapping), plus warnings; raises SettingsError if invalid.

    A client may nest settings under a ``ragLsp`` key (VS Code sends its
    section that way); both shapes are accepted. A client's update replaces
    its ``languageServers`` (so an entry it removes is gone); an ``overlay``
    (the operator file over the client's settings) merges them key by key.
    """
    if raw is None:
        return base, []
    if not isinstance(raw, dict):
        raise SettingsError(f"settings must be an object, got {type(raw).__name__}")
    nested = raw.get("ragLsp")
    if isinstance(nested, dict):
        raw = nested
    warnings: list[str] = []
    changes: dict[str, object] = {}
    for key, value in raw.items():
        name = snake_case(str(key))
        if name not in KNOWN_KEYS:
            warnings.append(f"unknown setting '{key}' ignored (known: {', '.join(KNOWN_KEYS)})")
            continue
        if name == "retrieval":
            # A client's update replaces its retrieval settings; the operator file overrides them key by key.
            retrieval, notes = _retrieval(value, base.retrieval if overlay else RetrievalSettings(), overlay)
            changes[name] = retrieval
            warnings.extend(notes)
            continue
        changes[name] = _VALIDATORS[name](key, value)
    if overlay and "language_servers" in changes:
        # A stronger source overrides a server setting key by key, so an operator file that only disables
        # a server keeps the command the editor configured.
        merged = {language: dict(server) for language, server in base.language_servers.items()}
        for language, server in cast(dict[str, dict], changes["language_servers"]).items():
            merged[language] = {**merged.get(language, {}), **server}
        changes["language_servers"] = merged
    return replace(base, **changes), warnings


def load_operator_file(root: Path) -> dict:
    """The operator file's table, or {} when there is none; raises SettingsError if it is not valid TOML."""
    path = root / OPERATOR_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read: {exc}") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: invalid TOML: {exc}") from exc


def _positive_int(key: str, value: object, upper: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0 or (upper and value > upper):
        bound = f" no larger than {upper}" if upper else ""
        raise SettingsError(f"setting '{key}' must be a positive integer{bound}, got {value!r}")
    return value


def _milliseconds(key: str, value: object, upper: int) -> int:
    """An integer from 0 (no wait) to ``upper``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= upper:
        raise SettingsError(f"setting '{key}' must be an integer from 0 to {upper}, got {value!r}")
    return value


def _globs(key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise SettingsError(f"setting '{key}' must be a list of non-empty glob strings, got {value!r}")
    return tuple(value)


def _languages(key: str, value: object) -> dict[str, bool]:
    if not isinstance(value, dict):
        raise SettingsError(f"setting '{key}' must map language names to true/false, got {value!r}")
    known = languages.all_languages()
    for name, enabled in value.items():
        if name not in known:
            raise SettingsError(f"setting '{key}': unknown language '{name}' (known: {', '.join(known)})")
        if not isinstance(enabled, bool):
            raise SettingsError(f"setting '{key}.{name}' must be true or false, got {enabled!r}")
    return dict(value)


def _optional_path(key: str, value: object) -> str | None:
    if value is None or (isinstance(value, str) and value.strip()):
        return value
    raise SettingsError(f"setting '{key}' must be a directory path or null, got {value!r}")


_SERVER_KEYS = ("command", "args", "initialization_options", "enabled")


def _language_servers(key: str, value: object) -> dict[str, dict]:
    """Per-language server settings; every key is optional and a missing one keeps the default."""
    if not isinstance(value, dict):
        raise SettingsError(f"setting '{key}' must map language names to server settings, got {value!r}")
    known = languages.all_languages()
    servers: dict[str, dict] = {}
    for language, raw in value.items():
        where = f"{key}.{language}"
        if language not in known:
            raise SettingsError(f"setting '{key}': unknown language '{language}' (known: {', '.join(known)})")
        if not isinstance(raw, dict):
            raise SettingsError(f"setting '{where}' must be an object with {', '.join(_SERVER_KEYS)}, got {raw!r}")
        server: dict = {}
        for name, item in raw.items():
            field_name = snake_case(str(name))
            if field_name not in _SERVER_KEYS:
                raise SettingsError(f"setting '{where}': unknown key '{name}' (known: {', '.join(_SERVER_KEYS)})")
            server[field_name] = _server_value(f"{where}.{name}", field_name, item)
        servers[language] = server
    return servers


def _server_value(where: str, name: str, value: object) -> object:
    if name == "command" and not (value is None or (isinstance(value, str) and value.strip())):
        raise SettingsError(f"setting '{where}' must be a command (a non-empty string) or null, got {value!r}")
    if name == "args" and not (isinstance(value, list) and all(isinstance(arg, str) for arg in value)):
        raise SettingsError(f"setting '{where}' must be a list of strings, got {value!r}")
    if name == "enabled" and not isinstance(value, bool):
        raise SettingsError(f"setting '{where}' must be true or false, got {value!r}")
    return value


def _retrieval(value: object, base: RetrievalSettings, operator: bool) -> tuple[RetrievalSettings, list[str]]:
    try:
        return parse(_snake_keys(value), base, operator)
    except ConfigError as exc:
        raise SettingsError(str(exc)) from None


def _snake_keys(value: object) -> object:
    if isinstance(value, dict):
        return {snake_case(str(key)): _snake_keys(item) for key, item in value.items()}
    return value


def _enhancements(key: str, value: object) -> dict[str, KnobValue]:
    try:
        return knob_map(value, key)
    except KnobError as exc:
        raise SettingsError(f"setting {exc}") from None


_VALIDATORS = {
    "budget_tokens": lambda key, value: _positive_int(key, value, 200_000),
    "top_k": lambda key, value: _positive_int(key, value, 100),
    "ignore": _globs,
    "languages": _languages,
    "cache_dir": _optional_path,
    "max_file_bytes": lambda key, value: _positive_int(key, value, 64 << 20),
    "max_index_files": lambda key, value: _positive_int(key, value, 10_000_000),
    "max_index_bytes": lambda key, value: _positive_int(key, value, 1 << 40),
    "max_index_seconds": lambda key, value: 0 if value == 0 else _positive_int(key, value, 86_400),
    "language_servers": _language_servers,
    "language_server_timeout_ms": lambda key, value: _positive_int(key, value, 60_000),
    "language_server_calls": lambda key, value: _positive_int(key, value, 50),
    "language_server_budget_ms": lambda key, value: _positive_int(key, value, 60_000),
    "ranking": lambda key, value: _ranking(key, value),
    "first_index_wait_ms": lambda key, value: _milliseconds(key, value, 30_000),
    "enhancements": _enhancements,
}


def _ranking(key: str, value: object) -> RankingConfig:
    try:
        return ranking_from_settings(value)
    except ValueError as exc:
        raise SettingsError(f"setting {exc}") from None
