"""Module references resolve to files by trailing path segments, in every language's notation."""

import pytest

from rag_lsp.index.module_map import ModuleMap, module_key, python_module

FILES = [
    "src/marshmallow/__init__.py", "src/marshmallow/schema.py", "src/marshmallow/fields.py",
    "internal/cart/cart.go", "internal/cart/item.go",
    "web/src/util/date.ts", "web/src/util/index.ts",
    "src/main/java/com/acme/Orders.java", "src/config/mod.rs", "net/http.h", "lib/foo/bar.rb",
]


@pytest.fixture
def modules():
    mapping = ModuleMap()
    for path in FILES:
        mapping.add(path, "package com.acme;\n" if path.endswith(".java") else "")
    return mapping


@pytest.mark.parametrize(
    "module, from_path, expected",
    [
        ("marshmallow.schema", None, ["src/marshmallow/schema.py"]),
        ("marshmallow", None, ["src/marshmallow/__init__.py"]),
        ("marshmallow.schema.Schema", None, ["src/marshmallow/schema.py"]),
        (".fields", "src/marshmallow/schema.py", ["src/marshmallow/fields.py"]),
        ("github.com/acme/shop/internal/cart", None, ["internal/cart/cart.go", "internal/cart/item.go"]),
        ("./util/date", "web/src/index.ts", ["web/src/util/date.ts"]),
        ("./util", "web/src/index.ts", ["web/src/util/index.ts"]),
        ("../util/date", "web/src/pages/home.ts", ["web/src/util/date.ts"]),
        ("com.acme.Orders", None, ["src/main/java/com/acme/Orders.java"]),
        ("crate::config", None, ["src/config/mod.rs"]),
        ("net/http.h", None, ["net/http.h"]),
        ("foo/bar", None, ["lib/foo/bar.rb"]),
        ("nothing.here", None, []),
    ],
)
def test_resolve(modules, module, from_path, expected):
    assert modules.resolve(module, from_path) == expected


def test_an_importer_only_sees_modules_of_its_language_family():
    """A TypeScript file named like a Python package would win by the file-before-directory rule."""
    mapping = ModuleMap()
    for path in ["shop/__init__.py", "shop/audit.py", "web/shop.ts", "web/cart.tsx"]:
        mapping.add(path)
    assert mapping.resolve("shop") == ["web/shop.ts"]
    assert mapping.resolve("shop", importer="jobs/nightly.py") == ["shop/__init__.py"]
    assert mapping.resolve("shop", importer="web/cart.tsx") == ["web/shop.ts"]


def test_remove_forgets_the_file(modules):
    modules.remove("src/marshmallow/schema.py")
    # The package itself remains the best guess for ``marshmallow.schema``.
    assert modules.resolve("marshmallow.schema") == ["src/marshmallow/__init__.py"]


def test_python_module_names():
    assert python_module("src/marshmallow/schema.py") == "marshmallow.schema"
    assert python_module("pkg/__init__.py") == "pkg"
    assert python_module("web/app.ts") is None


def test_lib_and_main_name_their_directory_only_in_rust():
    mapping = ModuleMap()
    for path in ["web/src/main.ts", "web/src/lib.ts", "web/src/lib/index.ts", "crate/src/lib.rs"]:
        mapping.add(path)
    assert mapping.resolve("./lib", "web/src/main.ts") == ["web/src/lib.ts"]
    assert mapping.resolve("./main", "web/src/lib.ts") == ["web/src/main.ts"]
    assert module_key("crate/src/lib.rs") == ("crate", "src")
    assert module_key("web/src/lib.ts") == ("web", "src", "lib")
