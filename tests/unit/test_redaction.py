"""Secrets inside ordinary files: what detect-secrets' detectors find is masked, nothing else, lines kept."""

from __future__ import annotations

import os
import re
import string
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from detect_secrets.plugins import keyword
from detect_secrets.util.filetype import determine_file_type
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp import redaction
from rag_lsp.redaction import find_secrets, redact, redact_json

AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB_TOKEN = "ghp_" + "aBcD1234" * 4 + "eFgH"
DB_PASSWORD = "s3cr3tPassw0rd"
KEY_BODY = ["MIIEowIBAAKCAQEAx1y2z3w4v5u6t7s8r9q0p1o2n3m4l5k6j7i8h9g0f1e2d3c4",
            "b5a6Z7Y8X9W0V1U2T3S4R5Q6P7O8N9M0L1K2J3I4H5G6F7E8D9C0B1A2z3y4x5w6"]

SETTINGS_PY = f'''"""Production settings."""
import os

AWS_ACCESS_KEY_ID = "{AWS_KEY_ID}"
AWS_SECRET_ACCESS_KEY = "{AWS_SECRET}"
GITHUB_TOKEN = os.environ.get("GITHUB_TOKEN", "{GITHUB_TOKEN}")
DATABASE_URL = "postgres://shop:{DB_PASSWORD}@db.internal:5432/shop"


def check_password(password: str) -> bool:
    return password == os.environ["ADMIN_PASSWORD"]
'''
NOTES_TXT = "Deploy key for the mirror:\n-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(KEY_BODY) + \
    "\n-----END RSA PRIVATE KEY-----\nAsk ops before rotating it.\n"


@pytest.mark.parametrize("text, path, secret", [
    (SETTINGS_PY, "shop/settings.py", AWS_KEY_ID),
    (SETTINGS_PY, "shop/settings.py", AWS_SECRET),
    (SETTINGS_PY, "shop/settings.py", GITHUB_TOKEN),
    (SETTINGS_PY, "shop/settings.py", DB_PASSWORD),
    (NOTES_TXT, "docs/notes.txt", KEY_BODY[0]),
    (NOTES_TXT, "docs/notes.txt", KEY_BODY[1]),
    ('SLACK = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx"\n', "bot.py", "xoxb-1234567890"),
    ('stripe.api_key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"\n', "pay.py", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("database:\n  password: correct-horse-battery\n", "config/app.yml", "correct-horse-battery"),
    ('const token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.abcDEF123";\n', "web/auth.js",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0"),
    ('{"api_key": "f00dbabe-live-9a8b7c6d5e"}\n', "secrets.json", "f00dbabe-live-9a8b7c6d5e"),
])
def test_secrets_planted_in_ordinary_files_are_masked(text, path, secret):
    masked = redact(text, path)
    assert secret not in masked
    assert "[redacted]" in masked
    # Lines and their lengths in bytes are kept, so line numbers and byte offsets still hold.
    assert [len(line.encode()) for line in masked.split("\n")] == [len(line.encode()) for line in text.split("\n")]
    assert redact(masked, path) == masked


def test_code_that_only_handles_secrets_is_left_alone():
    masked = redact(SETTINGS_PY, "shop/settings.py")
    assert "def check_password(password: str) -> bool:" in masked
    assert 'return password == os.environ["ADMIN_PASSWORD"]' in masked
    assert 'AWS_SECRET_ACCESS_KEY = "[redacted]' in masked
    plain = 'password = request.form["password"]\nsecret = get_secret()\nkey = "name"\nTOKEN_URL = "/auth/token"\n'
    assert redact(plain, "views.py") == plain


def test_a_private_key_keeps_its_header_and_footer_and_loses_its_body():
    masked = redact(NOTES_TXT, "notes.txt").split("\n")
    assert masked[1] == "-----BEGIN RSA PRIVATE KEY-----" and masked[4] == "-----END RSA PRIVATE KEY-----"
    assert masked[2].startswith("[redacted]***") and set(masked[3][len("[redacted]"):]) == {"*"}
    assert masked[0] == "Deploy key for the mirror:" and masked[5] == "Ask ops before rotating it."
    inline = 'KEY = "-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEEIBz7\\n-----END EC PRIVATE KEY-----\\n"\n'
    assert "MHcCAQEEIBz7" not in redact(inline, "keys.py")


def test_a_short_assigned_value_is_masked_where_it_is_assigned_only():
    text = 'password = "test"\n\ndef test_login(client):\n    assert client.login("admin", "test")\n'
    masked = redact(text, "tests/test_login.py")
    assert masked.split("\n")[0] == 'password = "****"'
    assert masked.split("\n")[2:] == text.split("\n")[2:]


def test_a_long_assigned_value_is_masked_wherever_it_stands_alone():
    text = 'DB_PASSWORD = "hunter2hunter2"\nconnect("db", "hunter2hunter2")\nHUNTER2HUNTER2_FLAG = 1\n'
    masked = redact(text, "db.py")
    assert "hunter2hunter2" not in masked and masked.endswith("HUNTER2HUNTER2_FLAG = 1\n")


def test_every_string_of_an_answer_is_scrubbed_and_nothing_else_changes():
    answer = {"items": [{"content": SETTINGS_PY, "score": 0.5, "why": [f"token {GITHUB_TOKEN}"]}], "n": 3,
              "hover": f"AWS_ACCESS_KEY_ID: str = '{AWS_KEY_ID}'", "ok": True, "none": None}
    scrubbed = redact_json(answer)
    text = repr(scrubbed)
    assert AWS_KEY_ID not in text and AWS_SECRET not in text and GITHUB_TOKEN not in text
    assert (scrubbed["n"], scrubbed["ok"], scrubbed["none"], scrubbed["items"][0]["score"]) == (3, True, None, 0.5)


def test_one_secret_among_many_clean_strings_is_scrubbed_and_a_clean_answer_is_left_as_it_is():
    clean = {"items": [{"path": f"pkg/mod_{i}.py", "why": ["bm25 over chunks 1.20", "defines `Ledger`"]}
                       for i in range(200)]}
    assert redact_json(clean) == clean
    leaky = {"items": [*clean["items"], {"why": [f"token {GITHUB_TOKEN}"]}]}
    scrubbed = redact_json(leaky)
    assert GITHUB_TOKEN not in repr(scrubbed) and scrubbed["items"][:200] == clean["items"]


def test_detect_secrets_is_imported_by_the_first_scan_not_by_the_index_or_the_answers():
    # A fresh interpreter: this one imported detect-secrets above. The index and an in-process answer import
    # redaction (for its rules' version and for parsing), but a warm start scans nothing.
    script = (
        "import sys\n"
        "from rag_lsp.index.root_index import Index\n"
        "from rag_lsp.retrieval.retrieve import retrieve\n"
        "from rag_lsp.redaction import redact\n"
        "before = 'detect_secrets' in sys.modules\n"
        f"masked = redact('token = \"{GITHUB_TOKEN}\"')\n"
        f"print(before, 'detect_secrets' in sys.modules, {GITHUB_TOKEN!r} in masked)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(redaction.__file__).parents[1])}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.split() == ["False", "True", "False"]


def test_the_rules_follow_the_installed_detect_secrets():
    assert redaction.RULES_VERSION.startswith(f"detect-secrets-{version('detect-secrets')}/")


def test_folding_covers_every_character_that_case_insensitive_patterns_take_for_an_ascii_letter():
    letters = re.compile("[a-z]", re.IGNORECASE)
    taken = {chr(cp) for cp in range(0x80, 0x110000) if letters.fullmatch(chr(cp))}
    assert taken == {special for special, _ in redaction._FOLDS}
    assert all(re.fullmatch(letter, special, re.IGNORECASE) for special, letter in redaction._FOLDS)


def expansions(word: str) -> set[str]:
    """``api_?key`` → {``apikey``, ``api_key``}."""
    return {word.replace("_?", joint) for joint in ("", "_")}


def test_every_keyword_contains_an_anchor_within_the_confirm_window():
    keyword_anchors = redaction._detectors().keyword_anchors
    anchors, confirm = keyword_anchors.folded, keyword_anchors.confirm
    assert confirm is not None
    for word in (w for entry in keyword.DENYLIST for w in expansions(entry)):
        placed = [(word.find(anchor), anchor) for anchor in anchors if anchor in word]
        assert any(at <= confirm.before and len(word) - at - len(anchor) <= confirm.after for at, anchor in placed), word


# Reference: every pattern of every rule and the keyword detector run on each whole line, as detect-secrets
# scans a file, with the same filters. The anchored scan must find exactly the same.

def line_by_line(text: str, path: str) -> set[tuple[str, str]]:
    found: dict[tuple[str, str], redaction.Secret] = {}
    groups = keyword.REGEX_BY_FILETYPE.get(determine_file_type(path), keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
    for line in (line.rstrip("\r") for line in text.split("\n")):
        for plugin, pattern in redaction._patterns():
            for value in redaction._values(pattern.regex, line, pattern.where.whole):
                redaction._keep(found, plugin, value, line)
        detector = redaction._detectors().keyword
        for value in detector.analyze_string(line, denylist_regex_to_group=groups):
            redaction._keep(found, detector, value, line)
    return set(found)


PATTERNS = [pattern.regex for _, pattern in redaction._patterns()] + \
    list(keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP) + list(keyword.CONFIG_DENYLIST_REGEX_TO_GROUP)
NOISE = st.text(alphabet=string.ascii_letters + string.digits + " _-=:.'\"/@()[]{};,\t\r" + "éİıſK中",
                max_size=40)


@st.composite
def lines_with_secrets(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        parts = [draw(NOISE)]
        for _ in range(draw(st.integers(0, 2))):
            pattern = draw(st.sampled_from(PATTERNS))
            parts.append(draw(st.from_regex(pattern, fullmatch=True)).replace("\n", " "))
            parts.append(draw(NOISE))
        lines.append("".join(parts)[:200])
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=lines_with_secrets(), path=st.sampled_from(["app.py", "config.yml", "main.go", "notes.txt", "x.cpp"]))
def test_the_anchored_scan_finds_what_the_detectors_find_line_by_line(text, path):
    found = {(secret.kind, secret.value) for secret in find_secrets(text, path)}
    assert found == line_by_line(text, path)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300) | lines_with_secrets())
def test_masking_never_raises_and_keeps_lines_and_their_byte_lengths(text):
    masked = redact(text, "file.py")
    assert [len(line.encode("utf-8", "surrogatepass")) for line in masked.split("\n")] == \
        [len(line.encode("utf-8", "surrogatepass")) for line in text.split("\n")]


def test_the_index_its_bm25_terms_and_its_cache_never_hold_a_secret(tmp_path):
    from conftest import write_tree

    from rag_lsp.index.root_index import Index
    from rag_lsp.index.terms import tokenize
    from rag_lsp.workspace.session import Session

    root = write_tree(tmp_path / "ws", {"shop/settings.py": SETTINGS_PY, "docs/notes.txt": NOTES_TXT})
    index = Index(root, cache_root=tmp_path / "cache")
    index.refresh()
    secrets = (AWS_KEY_ID, AWS_SECRET, GITHUB_TOKEN, DB_PASSWORD, *KEY_BODY)
    contents = "\n".join(chunk.content for chunk in index.chunks.values())
    assert "AWS_SECRET_ACCESS_KEY" in contents and not any(secret in contents for secret in secrets)
    secret_terms = {term for secret in secrets for term in tokenize(secret)} - set(tokenize(contents))
    assert secret_terms and not any(index.bm25.df(term) for term in secret_terms)
    assert not index.bm25.top_k(sorted(secret_terms), 5)
    index.close()
    cached = b"".join(path.read_bytes() for path in (tmp_path / "cache").rglob("*") if path.is_file())
    assert cached and not any(secret.encode() in cached for secret in secrets)
    # An editor's unsaved buffer is masked the same way.
    session = Session(use_cache=False)
    session.add_root(root)
    session.index_roots()
    session.open_document(root / "shop/local.py", f'LOCAL_TOKEN = "{GITHUB_TOKEN}"\n', 1)
    located = session.locate(root / "shop/local.py")
    assert located is not None
    assert not any(GITHUB_TOKEN in chunk.content for _, chunk in located[0].index.chunks_of("shop/local.py"))
    session.close()
