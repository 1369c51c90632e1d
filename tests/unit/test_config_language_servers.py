"""The ``languageServers`` settings: validation, and how the client's and the operator's settings combine."""

from __future__ import annotations

import pytest

from rag_lsp.server import wire
from rag_lsp.workspace.settings import Settings, SettingsError, apply_settings


def test_server_settings_are_validated_and_snake_cased():
    settings, warnings = apply_settings(Settings(), {"languageServers": {
        "python": {"command": "jedi-language-server", "args": [], "initializationOptions": {"a": 1}},
        "go": {"enabled": False}}})
    assert warnings == []
    assert settings.language_servers == {
        "python": {"command": "jedi-language-server", "args": [], "initialization_options": {"a": 1}},
        "go": {"enabled": False}}
    assert wire.settings_json(settings)["languageServers"]["python"]["initializationOptions"] == {"a": 1}


@pytest.mark.parametrize(("raw", "message"), [
    ({"cobol": {}}, "unknown language 'cobol'"),
    ({"python": "pyright"}, "must be an object"),
    ({"python": {"cmd": "x"}}, "unknown key 'cmd'"),
    ({"python": {"command": ""}}, "must be a command"),
    ({"python": {"args": "--stdio"}}, "must be a list of strings"),
    ({"python": {"enabled": "no"}}, "must be true or false"),
])
def test_invalid_server_settings_are_rejected_by_name(raw, message):
    with pytest.raises(SettingsError, match=message):
        apply_settings(Settings(), {"languageServers": raw})


def test_a_client_update_replaces_its_servers_and_the_operator_file_overlays_them():
    client, _ = apply_settings(Settings(), {"languageServers": {"python": {"command": "jedi-language-server"},
                                                                "go": {"enabled": False}}})
    # The editor removed Go and changed Python: what it sent last is what holds.
    updated, _ = apply_settings(client, {"languageServers": {"python": {"args": ["-v"]}}})
    assert updated.language_servers == {"python": {"args": ["-v"]}}
    # The operator file disables Python without forgetting the command the editor chose for it.
    operated, _ = apply_settings(client, {"language_servers": {"python": {"enabled": False}}}, overlay=True)
    assert operated.language_servers == {"python": {"command": "jedi-language-server", "enabled": False},
                                         "go": {"enabled": False}}
