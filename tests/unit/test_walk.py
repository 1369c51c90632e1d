"""Tests for the workspace walk: what is yielded, in which order, and why the rest is skipped."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

import pytest

from rag_lsp.index import admission as admission_module
from rag_lsp.index import walk as walk_module
from rag_lsp.index.admission import SKIP_REASONS, Admission, LoadedFile, is_secret_path, load_bytes
from rag_lsp.index.walk import WalkedFile, WalkStats, load, skip_reason, walk


def make(root: Path, files: dict[str, str | bytes]) -> None:
    """Create files (and their parent directories) under root."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace of its own, so files that shared fixtures put in tmp_path never show up."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


def paths(roots: Path | Iterable[Path], **kwargs) -> tuple[list[str], WalkStats]:
    """Walk and return the yielded relative paths with the stats."""
    stats = WalkStats()
    root_list = [roots] if isinstance(roots, Path) else list(roots)
    return [f.path for f in walk(root_list, stats, _admission(**kwargs))], stats


def _admission(extra_ignores: Iterable[str] = (), max_bytes: int = 1 << 20) -> Admission:
    return Admission(tuple(extra_ignores), max_bytes)


def test_skip_reasons_are_the_documented_set() -> None:
    assert set(SKIP_REASONS) == {
        "symlink", "special_file", "unreadable", "secret", "excluded_dir", "hidden", "ignored",
        "lock_file", "source_map", "minified", "binary", "too_large", "non_utf8",
    }
    assert len(SKIP_REASONS) == len(set(SKIP_REASONS))


def test_path_order_is_preorder_by_name_bytes(ws: Path) -> None:
    make(ws, {"b.py": "", "a.py": "", "a/z.py": "", "a/b/c.py": "", "A.py": "", "_.py": ""})
    found, stats = paths(ws)
    assert found == ["A.py", "_.py", "a/b/c.py", "a/z.py", "a.py", "b.py"]
    assert stats.files == 6
    assert not stats.skipped


def test_names_beyond_ascii_are_ordered_by_their_bytes_too(ws: Path) -> None:
    # Code points order like UTF-8, but a name that is not UTF-8 (here the byte 0xff, a lone surrogate as
    # a string) sorts below U+E000 as a string and above every UTF-8 byte sequence as bytes.
    names = ["z.py", "é.py", "\ue000.py", "\U0001f600.py", os.fsdecode(b"\xff.py"), "a.py"]
    # Linux file systems (the supported platform) take any bytes but ``/`` and NUL in a name.
    for name in names:
        (ws / name).write_text("")
    found, _ = paths(ws)
    assert found == sorted(names, key=os.fsencode)
    assert found != sorted(names)


def test_two_walks_are_identical(ws: Path) -> None:
    names = [f"d{i % 3}/f{i}.py" for i in range(30)]
    make(ws, {name: "x" for name in reversed(names)})
    first = list(walk([ws], WalkStats()))
    second = list(walk([ws], WalkStats()))
    assert first == second
    assert [f.path for f in first] == sorted(names)


def test_walked_file_fields(ws: Path) -> None:
    make(ws, {"src/app/main.py": "print(1)\n"})
    (found,) = walk([str(ws)], WalkStats())
    assert found.root == ws.resolve()
    assert found.path == "src/app/main.py"
    assert found.abs_path == ws.resolve() / "src" / "app" / "main.py"
    assert found.size == 9
    assert found.mtime_ns == (ws / "src/app/main.py").stat().st_mtime_ns


def test_empty_file_is_yielded_and_loads(ws: Path) -> None:
    make(ws, {"empty.py": ""})
    (found,) = walk([ws], WalkStats())
    assert load(found) == LoadedFile("", b"", None)


def test_nested_gitignore_negation_anchoring_and_dir_only(ws: Path) -> None:
    make(ws, {
        ".gitignore": "*.log\n/top.txt\ncache/\ndocs/**/gen.md\n",
        "a.log": "", "top.txt": "", "local.txt": "", "cache/x.py": "", "cache/y.py": "",
        "docs/a/b/gen.md": "", "docs/gen.md": "", "docs/keep.md": "",
        "sub/.gitignore": "!keep.log\nlocal.txt\n",
        "sub/keep.log": "", "sub/x.log": "", "sub/top.txt": "", "sub/local.txt": "",
        "sub/cache": "",
    })
    found, stats = paths(ws)
    assert found == ["docs/keep.md", "local.txt", "sub/cache", "sub/keep.log", "sub/top.txt"]
    # Ignored: a.log, cache/ (once), both gen.md, top.txt, sub/local.txt and sub/x.log.
    assert stats.skipped["ignored"] == 7
    assert stats.skipped["hidden"] == 2


def test_deeper_gitignore_overrides_shallower(ws: Path) -> None:
    make(ws, {
        ".gitignore": "!special.txt\n",
        "a/.gitignore": "*.txt\n",
        "a/special.txt": "", "a/b/.gitignore": "!*.txt\n", "a/b/c.txt": "", "special.txt": "",
    })
    found, _ = paths(ws)
    assert found == ["a/b/c.txt", "special.txt"]


def test_parent_excluded_directory_cannot_be_reincluded(ws: Path) -> None:
    make(ws, {
        ".gitignore": "logs/\n!logs/keep.txt\n",
        "logs/keep.txt": "", "logs/other.txt": "", "logs/deep/more.txt": "", "main.py": "",
    })
    found, stats = paths(ws)
    assert found == ["main.py"]
    assert stats.skipped["ignored"] == 1
    assert stats.examples["ignored"] == ["logs"]


def test_ragignore_nests_and_wins_over_gitignore_at_same_level(ws: Path) -> None:
    make(ws, {
        ".gitignore": "*.gen.py\n",
        ".ragignore": "generated/\n!keep.gen.py\n",
        "generated/a.py": "", "keep.gen.py": "", "drop.gen.py": "", "main.py": "",
        "sub/.ragignore": "*.txt\n", "sub/notes.txt": "", "notes.txt": "",
    })
    found, stats = paths(ws)
    assert found == ["keep.gen.py", "main.py", "notes.txt"]
    assert stats.skipped["ignored"] == 3


def test_git_info_exclude_is_honoured(ws: Path) -> None:
    make(ws, {".git/info/exclude": "scratch.py\n", ".git/HEAD": "", "scratch.py": ""})
    make(ws, {"a.py": ""})
    found, stats = paths(ws)
    assert found == ["a.py"]
    assert stats.skipped["ignored"] == 1
    assert stats.skipped["excluded_dir"] == 1


def test_extra_ignores_apply_relative_to_each_root(ws: Path) -> None:
    one, two = ws / "one", ws / "two"
    make(one, {"docs/a.md": "", "x.snap": "", "keep.py": "", "sub/docs/b.md": ""})
    make(two, {"docs/c.md": "", "y.snap": "", "also.py": ""})
    found, stats = paths([one, two], extra_ignores=["*.snap", "/docs/"])
    assert found == ["keep.py", "sub/docs/b.md", "also.py"]
    assert stats.skipped["ignored"] == 4


def test_extra_ignores_override_ignore_files(ws: Path) -> None:
    make(ws, {".gitignore": "!*.snap\n", "x.snap": "", "a.py": ""})
    found, _ = paths(ws, extra_ignores=["*.snap"])
    assert found == ["a.py"]


def test_malformed_extra_ignore_is_a_configuration_error(ws: Path) -> None:
    with pytest.raises(ValueError):
        walk([ws], WalkStats(), _admission(extra_ignores=["!"]))


def test_malformed_ignore_line_keeps_the_other_rules(ws: Path) -> None:
    make(ws, {".gitignore": "!\n*.tmp\n", "a.tmp": "", "a.py": ""})
    found, _ = paths(ws)
    assert found == ["a.py"]


EXCLUDED_DIRS = [
    ".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", "target", "vendor",
    "bower_components", "jspm_packages", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".gradle", ".idea", ".next", ".nuxt", ".svelte-kit", ".terraform", "coverage",
    "htmlcov", "site-packages", "mypkg.egg-info", "Pods", "DerivedData", ".cache", ".parcel-cache",
    ".turbo", ".yarn",
]


@pytest.mark.parametrize("name", EXCLUDED_DIRS)
def test_excluded_dir_is_pruned_and_counted_once(ws: Path, name: str) -> None:
    make(ws, {f"{name}/a.py": "", f"{name}/deep/b.py": "", f"{name}/c.py": "", "main.py": ""})
    found, stats = paths(ws)
    assert found == ["main.py"]
    assert stats.skipped == {"excluded_dir": 1}
    assert stats.examples["excluded_dir"] == [name]


@pytest.mark.parametrize("name", ["third_party", "out", "env", "src"])
def test_source_like_dir_names_are_walked(ws: Path, name: str) -> None:
    make(ws, {f"{name}/a.py": ""})
    found, _ = paths(ws)
    assert found == [f"{name}/a.py"]


@pytest.mark.parametrize("name", ["env", "my-python"])
def test_virtualenv_is_detected_by_pyvenv_cfg(ws: Path, name: str) -> None:
    make(ws, {f"{name}/pyvenv.cfg": "home = /usr\n", f"{name}/lib/x.py": "", "a.py": ""})
    found, stats = paths(ws)
    assert found == ["a.py"]
    assert stats.skipped == {"excluded_dir": 1}


def test_a_virtualenv_is_told_apart_as_the_single_path_rules_tell_it(ws: Path) -> None:
    """The walk reads the marker from a listing; ``skip_reason`` asks the disk: they must agree, also for an
    ignored virtualenv (its reason stays the virtualenv's), a marker that is a directory, or a link to one."""
    make(ws, {".gitignore": "ignored_env/\n", "ignored_env/pyvenv.cfg": "", "ignored_env/x.py": "",
              "odd/pyvenv.cfg/x.py": "", "linked/y.py": "", "real.cfg": "", "nested/deeper/pyvenv.cfg": "",
              "nested/deeper/z.py": "", "nested/w.py": "", "a.py": ""})
    (ws / "linked" / "pyvenv.cfg").symlink_to(ws / "real.cfg")
    found, stats = paths(ws)
    assert found == ["a.py", "nested/w.py", "odd/pyvenv.cfg/x.py", "real.cfg"]
    assert stats.skipped["excluded_dir"] == 3 and stats.examples["excluded_dir"] == ["ignored_env", "linked", "nested/deeper"]
    for rel in ("ignored_env/x.py", "linked/y.py", "nested/deeper/z.py"):
        assert skip_reason(ws, rel) == "excluded_dir"
    assert skip_reason(ws, "odd/pyvenv.cfg/x.py") is None


def test_symlinks_are_skipped_never_followed(ws: Path) -> None:
    make(ws, {"real/a.py": "", "target.py": ""})
    (ws / "link_file.py").symlink_to(ws / "target.py")
    (ws / "link_dir").symlink_to(ws / "real", target_is_directory=True)
    (ws / "real" / "loop").symlink_to(ws, target_is_directory=True)
    (ws / "self").symlink_to(ws / "self")
    (ws / "dangling.py").symlink_to(ws / "missing.py")
    found, stats = paths(ws)
    assert found == ["real/a.py", "target.py"]
    assert stats.skipped == {"symlink": 5}


def test_load_refuses_a_symlink_swapped_in_after_the_walk(ws: Path) -> None:
    make(ws, {"target.py": "x"})
    (ws / "link.py").symlink_to(ws / "target.py")
    assert load(ws / "link.py").skip == "symlink"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need POSIX")
def test_fifo_is_special_file_and_never_opened_for_blocking_read(ws: Path) -> None:
    make(ws, {"a.py": ""})
    os.mkfifo(ws / "pipe.py")
    found, stats = paths(ws)
    assert found == ["a.py"]
    assert stats.skipped == {"special_file": 1}
    results: list[LoadedFile] = []
    reader = threading.Thread(target=lambda: results.append(load(ws / "pipe.py")))
    reader.daemon = True
    reader.start()
    reader.join(timeout=5)
    if reader.is_alive():
        # Opening the write end releases the blocked reader, so a failure cannot hang the suite.
        os.close(os.open(ws / "pipe.py", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("load() blocked opening a FIFO")
    assert results == [LoadedFile(None, None, "special_file")]


def test_large_minified_js_is_too_large_by_stat(ws: Path) -> None:
    make(ws, {"big.js": "a" * (5 * 1024 * 1024)})
    found, stats = paths(ws)
    assert found == []
    assert stats.skipped == {"too_large": 1}


def test_max_bytes_is_configurable(ws: Path) -> None:
    make(ws, {"a.py": "x" * 100, "b.py": "x" * 101})
    found, stats = paths(ws, max_bytes=100)
    assert found == ["a.py"]
    assert stats.skipped == {"too_large": 1}
    assert load(ws / "b.py", _admission(max_bytes=100)).skip == "too_large"


def test_one_line_js_is_minified_by_content(ws: Path) -> None:
    make(ws, {"app.js": "var a=1;" * 6400})
    (found,) = walk([ws], WalkStats())
    stats = WalkStats()
    assert load(found, stats=stats) == LoadedFile(None, None, "minified")
    assert stats.skipped == {"minified": 1}
    assert stats.examples["minified"] == ["app.js"]


def test_minified_content_rule_thresholds() -> None:
    long_average = ("x" * 400 + "\n") * 10
    assert load_bytes("a.css", long_average.encode()).skip == "minified"
    assert load_bytes("a.json", ("y" * 5001 + "\n" + "z\n" * 100).encode()).skip == "minified"
    assert load_bytes("a.py", long_average.encode()).skip is None
    assert load_bytes("small.js", ("x" * 1000).encode()).skip is None
    assert load_bytes("normal.mjs", ("const a = 1;\n" * 500).encode()).skip is None


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("app.min.js", "minified"), ("site.min.css", "minified"), ("jquery-min.js", "minified"),
        ("main.bundle.js", "minified"), ("3.chunk.js", "minified"),
        ("app.js.map", "source_map"), ("site.css.map", "source_map"), ("x.map", "source_map"),
    ],
)
def test_generated_web_files_are_skipped_by_name(ws: Path, name: str, reason: str) -> None:
    make(ws, {name: "x", "app.js": "x"})
    found, stats = paths(ws)
    assert found == ["app.js"]
    assert stats.skipped == {reason: 1}


LOCK_FILES = [
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock", "poetry.lock", "Pipfile.lock",
    "composer.lock", "Gemfile.lock", "go.sum", "uv.lock", "bun.lockb", "npm-shrinkwrap.json",
    "flake.lock", "anything.lock",
]


@pytest.mark.parametrize("name", LOCK_FILES)
def test_lock_files_are_skipped(ws: Path, name: str) -> None:
    make(ws, {f"pkg/{name}": "x", "pkg/package.json": "{}"})
    found, stats = paths(ws)
    assert found == ["pkg/package.json"]
    assert stats.skipped == {"lock_file": 1}


@pytest.mark.parametrize(
    "name",
    ["logo.png", "photo.JPG", "font.woff2", "lib.so", "app.exe", "mod.pyc", "pkg.whl", "x.wasm",
     "doc.pdf", "sheet.xlsx", "data.sqlite", "weights.onnx", "t.parquet", "arr.npy", "a.tar.gz"],
)
def test_binary_extensions_are_skipped_in_walk(ws: Path, name: str) -> None:
    make(ws, {name: b"\x00\x01", "a.py": ""})
    found, stats = paths(ws)
    assert found == ["a.py"]
    assert stats.skipped == {"binary": 1}


def test_nul_byte_is_binary_by_content(ws: Path) -> None:
    make(ws, {"blob.py": b"abc\x00def", "late.py": b"a" * 9000 + b"\x00"})
    blob, late = walk([ws], WalkStats())
    assert load(blob).skip == "binary"
    assert load(late).skip is None


def test_invalid_utf8_is_non_utf8(ws: Path) -> None:
    make(ws, {"latin.py": "caf\u00e9 = 1\n".encode("latin-1")})
    stats = WalkStats()
    (found,) = walk([ws], stats)
    assert load(found, stats=stats) == LoadedFile(None, None, "non_utf8")
    assert stats.skipped == {"non_utf8": 1}


def test_bom_is_stripped_from_text_but_kept_in_data(ws: Path) -> None:
    raw = b"\xef\xbb\xbfx = 1\n"
    make(ws, {"bom.py": raw})
    (found,) = walk([ws], WalkStats())
    assert load(found) == LoadedFile("x = 1\n", raw, None)


def test_load_bytes_checks_length_for_buffers() -> None:
    assert load_bytes("a.py", b"x" * 11, max_bytes=10).skip == "too_large"
    assert load_bytes("a.py", b"x" * 10, max_bytes=10) == LoadedFile("x" * 10, b"x" * 10, None)


SECRETS = [
    ".env", ".env.local", ".env.production", "server.pem", "tls.key", "cert.p12", "cert.pfx",
    "store.jks", "release.keystore", "vault.kdbx", "putty.ppk", "id_rsa", "id_rsa.pub", "id_dsa",
    "id_ecdsa", "id_ed25519", "credentials", "credentials.json", ".netrc", "_netrc", ".npmrc",
    ".pypirc", ".git-credentials", ".htpasswd", "api.secret", "secrets.yml", "secrets.yaml",
    "secrets.json", "service-account.json", "service-account-prod.json", "terraform.tfstate",
    "prod.tfvars", "ID_RSA", "Server.PEM", ".ENV",
]


@pytest.mark.parametrize("name", SECRETS)
def test_secret_names_are_skipped_as_secret(ws: Path, name: str) -> None:
    make(ws, {f"conf/{name}": "TOKEN=x", "a.py": ""})
    found, stats = paths(ws)
    assert found == ["a.py"]
    assert stats.skipped == {"secret": 1}
    assert is_secret_path(name)
    assert is_secret_path(f"some/dir/{name}")
    assert is_secret_path(f"C:\\dir\\{name}")


@pytest.mark.parametrize(
    "name", [".env.example", ".env.sample", ".env.template", "main.py", "keys.py", "credentials.py"]
)
def test_non_secret_names(name: str) -> None:
    assert not is_secret_path(name)
    assert not is_secret_path(f"src/{name}")


@pytest.mark.parametrize(
    ("name", "reason"),
    [(".env", "secret"), (".eslintrc.js", "hidden"), ("yarn.lock", "lock_file"),
     ("a.css.map", "source_map"), ("a.min.js", "minified"), ("A.PNG", "binary"), ("a.py", None)],
)
def test_name_skip_reason(name: str, reason: str | None) -> None:
    assert admission_module.name_skip_reason(name) == reason


def test_secret_is_reported_even_when_also_ignored(ws: Path) -> None:
    make(ws, {".gitignore": "*.pem\n.env\n", "tls.pem": "", ".env": "", "a.py": ""})
    found, stats = paths(ws)
    assert found == ["a.py"]
    assert stats.skipped == {"secret": 2, "hidden": 1}


def test_env_templates_are_hidden_not_secret(ws: Path) -> None:
    make(ws, {".env.example": "TOKEN=", "a.py": ""})
    found, stats = paths(ws)
    assert found == ["a.py"]
    assert stats.skipped == {"hidden": 1}


def test_source_that_handles_credentials_is_indexed(ws: Path) -> None:
    make(ws, {"auth/credentials.py": "", "auth/credentials.go": ""})
    found, _ = paths(ws)
    assert found == ["auth/credentials.go", "auth/credentials.py"]


def _deny(monkeypatch: pytest.MonkeyPatch, name: str, target: Path) -> None:
    """Make os.<name> raise PermissionError for one path, as chmod 000 would for a non-root user.

    Monkeypatching works even when tests run as root, where chmod cannot block reads.
    """
    real = getattr(os, name)

    def guarded(path, *args, **kwargs):
        if Path(path) == target:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, name, guarded)


def test_permission_denied_file_is_unreadable(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(ws, {"locked.py": "x", "open.py": "y"})
    locked, unlocked = walk([ws], WalkStats())
    _deny(monkeypatch, "open", locked.abs_path)
    stats = WalkStats()
    assert load(locked, stats=stats) == LoadedFile(None, None, "unreadable")
    assert load(unlocked).text == "y"
    assert stats.examples == {"unreadable": ["locked.py"]}


def test_permission_denied_directory_is_unreadable(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(ws, {"locked/a.py": "", "open/b.py": ""})
    _deny(monkeypatch, "scandir", (ws / "locked").resolve())
    found, stats = paths(ws)
    assert found == ["open/b.py"]
    assert stats.skipped == {"unreadable": 1}
    assert stats.examples["unreadable"] == ["locked"]


def test_vanished_file_is_unreadable(ws: Path) -> None:
    make(ws, {"gone.py": "x"})
    (found,) = walk([ws], WalkStats())
    (ws / "gone.py").unlink()
    assert load(found).skip == "unreadable"


def test_file_deleted_during_walk_is_unreadable(ws: Path) -> None:
    make(ws, {"a/x.py": "", "b.py": "", "c.py": ""})
    stats = WalkStats()
    walker = walk([ws], stats)
    assert next(walker).path == "a/x.py"
    # The root is already listed, so b.py is stat-ed only after it has been deleted.
    (ws / "b.py").unlink()
    assert [f.path for f in walker] == ["c.py"]
    assert stats.skipped == {"unreadable": 1}


def test_missing_root_raises_at_call(ws: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        walk([ws / "nope"], WalkStats())


def test_file_root_raises(ws: Path) -> None:
    make(ws, {"f.py": ""})
    with pytest.raises(NotADirectoryError, match="not a directory"):
        walk([ws / "f.py"], WalkStats())


def test_overlapping_roots_yield_each_file_once(ws: Path) -> None:
    make(ws, {"a.py": "", "sub/b.py": "", "sub/c/d.py": ""})
    stats = WalkStats()
    found = list(walk([ws, ws / "sub", ws], stats))
    root = ws.resolve()
    assert [(f.root, f.path) for f in found] == [
        (root, "a.py"), (root, "sub/b.py"), (root, "sub/c/d.py"),
    ]
    assert stats.files == 3


def test_nested_root_listed_first_keeps_its_own_relative_paths(ws: Path) -> None:
    make(ws, {"a.py": "", "sub/b.py": ""})
    found = list(walk([ws / "sub", ws], WalkStats()))
    assert [f.path for f in found] == ["b.py", "a.py"]


def test_examples_are_capped_at_five_in_path_order(ws: Path) -> None:
    make(ws, {f".h{i}": "" for i in range(7)})
    _, stats = paths(ws)
    assert stats.skipped["hidden"] == 7
    assert stats.examples["hidden"] == [".h0", ".h1", ".h2", ".h3", ".h4"]


def test_unknown_skip_reason_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown skip reason"):
        WalkStats().skip("nope", "a.py")


def test_github_dir_is_visible_but_other_hidden_dirs_are_not(ws: Path) -> None:
    make(ws, {".github/workflows/ci.yml": "on: push\n", ".hidden/x.py": ""})
    make(ws, {".hidden/y/z.py": ""})
    found, stats = paths(ws)
    assert found == [".github/workflows/ci.yml"]
    assert stats.skipped == {"hidden": 1}
    assert stats.examples["hidden"] == [".hidden"]


def test_walked_files_are_frozen(ws: Path) -> None:
    make(ws, {"a.py": ""})
    (found,) = walk([ws], WalkStats())
    assert isinstance(found, WalkedFile)
    with pytest.raises(AttributeError):
        found.path = "b.py"  # type: ignore[misc]


def test_module_does_not_import_the_lsp_stack() -> None:
    source = Path(walk_module.__file__).read_text(encoding="utf-8")
    assert "pygls" not in source
    assert "lsprotocol" not in source


def test_one_files_skip_reason_agrees_with_the_walk(ws: Path) -> None:
    """``skip_reason`` applies the walk's path rules to one file without listing directories; for every file of a
    tree full of rules it must say "keep" exactly for the files the walk yields."""
    make(ws, {
        ".gitignore": "*.log\nbuild/\n!keep.log\n/top_only.txt\n",
        ".ragignore": "generated/**\n",
        "app/main.py": "x = 1\n",
        "app/.gitignore": "local.py\n!important.log\n",
        "app/local.py": "",
        "app/important.log": "",
        "app/debug.log": "",
        "app/top_only.txt": "",
        "top_only.txt": "",
        "keep.log": "",
        "build/out.py": "",
        "generated/api.py": "",
        "node_modules/pkg/index.js": "",
        "env/pyvenv.cfg": "",
        "env/lib/site.py": "",
        ".hidden/file.py": "",
        ".github/workflows/ci.yml": "on: push\n",
        ".env": "SECRET=1\n",
        "certs/server.pem": "",
        "big.txt": "x" * 2000,
        "package-lock.json": "{}",
        "vendor/lib.min.js": "",
        "docs/readme.md": "# hi\n",
        "extra/skip_me.py": "",
    })
    kwargs = {"extra_ignores": ["extra/"], "max_bytes": 1000}
    walked, _ = paths(ws, **kwargs)
    every = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.is_file())
    kept = [rel for rel in every if skip_reason(ws, rel, _admission(**kwargs)) is None]
    assert kept == walked
    assert skip_reason(ws, "app/local.py") == "ignored"
    assert skip_reason(ws, ".env") == "secret"
    assert skip_reason(ws, "node_modules/pkg/index.js") == "excluded_dir"
    assert skip_reason(ws, "missing.py") == "unreadable"


def test_buffers_are_admitted_exactly_as_the_walk_admits_files(ws: Path) -> None:
    """The editor's buffers and disk events ask ``Admission.buffer_reason``; for every file the walk leaves
    out by its name, its language or its content, the buffer of the same path and text is left out too,
    and every file the walk keeps is admitted as a buffer."""
    files: dict[str, str | bytes] = {
        "app/main.py": "x = 1\n",
        "app/.env": "TOKEN=1\n",
        "app/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
        "app/package-lock.json": "{}\n",
        "app/bundle.min.js": "var a=1;\n",
        "app/logo.png": b"\x89PNG\r\n",
        "app/blob.py": b"x = 1\x00\n",
        "app/latin1.py": "caf\u00e9 = 1\n".encode("latin-1"),
        "app/main.go": "package main\n",
        "app/notes.md": "# notes\n",
    }
    make(ws, files)
    admission = Admission(disabled_languages=frozenset({"go"}))
    stats = WalkStats()
    kept = {f.path for f in walk([ws], stats, admission) if load(f, admission, stats).skip is None}
    for rel, content in files.items():
        data = content if isinstance(content, bytes) else content.encode()
        assert (admission.buffer_reason(rel, data) is None) == (rel in kept), rel
    assert kept == {"app/main.py", "app/notes.md"}


def test_a_directory_reincluded_by_a_trailing_slash_negation_is_walked(ws: Path) -> None:
    """git keeps ``core/`` and ``core/a.go`` under ``*``, ``!*.*``, ``!*/`` (a pattern Go projects use to ignore
    extension-less build outputs); the walk must too, and still skip extension-less files."""
    make(ws, {".gitignore": "*\n!*.*\n!*/\n", "core/a.go": "package core\n", "core/sub/b.go": "package sub\n",
              "core/server": "binary output\n", "main.go": "package main\n"})
    found, stats = paths(ws)
    assert found == ["core/a.go", "core/sub/b.go", "main.go"]
    assert stats.skipped["ignored"] == 1
