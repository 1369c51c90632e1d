"""Compiler, linter and test-runner locations are found in each tool's layout, and nothing else is."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp.retrieval.evidence import Location, parse_locations
from rag_lsp.retrieval.evidence.build_errors import looks_like_path


def rows(text: str) -> list[tuple]:
    return [(loc.path, loc.line, loc.column, loc.severity, loc.tool) for loc in parse_locations(text)]


def test_mypy_with_and_without_columns():
    text = '''\
src/shop/cart.py:12: error: Incompatible types in assignment (expression has type "str", variable has type "int")  [assignment]
src/shop/cart.py:20:9: note: Revealed type is "builtins.int"
Found 1 error in 1 file (checked 4 source files)
'''
    assert parse_locations(text) == [
        Location("src/shop/cart.py", 12, None,
                 'Incompatible types in assignment (expression has type "str", variable has type "int")  [assignment]',
                 "error", "mypy"),
        Location("src/shop/cart.py", 20, 9, 'Revealed type is "builtins.int"', "note", "mypy"),
    ]


def test_pyright_cli_output_with_its_file_header():
    text = '''\
/home/u/shop/src/cart.py
  /home/u/shop/src/cart.py:12:5 - error: Cannot access attribute "totl" for class "Cart"
    Attribute "totl" is unknown (reportAttributeAccessIssue)
  /home/u/shop/src/my cart.py:20:1 - warning: Import "requests" could not be resolved from source (reportMissingModuleSource)
2 errors, 1 warning, 0 informations 
'''
    assert rows(text) == [
        ("/home/u/shop/src/cart.py", 12, 5, "error", "pyright"),
        ("/home/u/shop/src/my cart.py", 20, 1, "warning", "pyright"),
    ]
    assert parse_locations(text)[0].message == 'Cannot access attribute "totl" for class "Cart"'


def test_tsc_plain_and_pretty():
    text = '''\
src/cart.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.
src/checkout.ts:30:7 - error TS2339: Property 'totl' does not exist on type 'Cart'.

30   cart.totl();
          ~~~~

Found 2 errors in 2 files.
'''
    assert rows(text) == [("src/cart.ts", 12, 5, "error", "tsc"), ("src/checkout.ts", 30, 7, "error", "tsc")]
    assert parse_locations(text)[0].message == "Type 'string' is not assignable to type 'number'."


def test_eslint_stylish_problems_belong_to_the_file_header_above_them():
    text = '''\

/home/u/app/src/cart.js
  12:5   error    'total' is not defined                no-undef
  20:1   warning  Unexpected console statement          no-console

/home/u/app/src/money.js
  3:10  error  Parsing error: Unexpected token )

✖ 3 problems (2 errors, 1 warning)
'''
    assert parse_locations(text) == [
        Location("/home/u/app/src/cart.js", 12, 5, "'total' is not defined", "error", "eslint"),
        Location("/home/u/app/src/cart.js", 20, 1, "Unexpected console statement", "warning", "eslint"),
        Location("/home/u/app/src/money.js", 3, 10, "Parsing error: Unexpected token )", "error", "eslint"),
    ]


def test_go_build_vet_and_test_output():
    text = '''\
# github.com/acme/shop/cart
./cart.go:12:5: undefined: totl
./cart.go:20:2: declared and not used: x
--- FAIL: TestTotal (0.00s)
    cart_test.go:14: Total() = 3, want 4
FAIL
FAIL	github.com/acme/shop/cart	0.012s
'''
    assert parse_locations(text) == [
        Location("cart.go", 12, 5, "undefined: totl", None, "go"),
        Location("cart.go", 20, 2, "declared and not used: x", None, "go"),
        Location("cart_test.go", 14, None, "Total() = 3, want 4", None, "go"),
    ]


def test_rustc_takes_message_and_severity_from_the_header_above_the_arrow():
    text = '''\
error[E0308]: mismatched types
 --> src/main.rs:4:5
  |
3 | fn total() -> i32 {
  |               --- expected `i32` because of return type
4 |     "x"
  |     ^^^ expected `i32`, found `&str`
  |
 ::: src/lib.rs:10:1
warning: unused variable: `y`
 --> src/cart.rs:2:9
'''
    assert parse_locations(text) == [
        Location("src/main.rs", 4, 5, "mismatched types", "error", "rustc"),
        Location("src/lib.rs", 10, 1, None, "note", "rustc"),
        Location("src/cart.rs", 2, 9, "unused variable: `y`", "warning", "rustc"),
    ]


def test_javac_and_maven():
    text = '''\
src/main/java/com/acme/Cart.java:12: error: cannot find symbol
        total += item.prize();
                     ^
  symbol:   method prize()
  location: variable item of type Item
[ERROR] /home/u/shop/src/main/java/com/acme/Order.java:[31,18] incompatible types: String cannot be converted to int
'''
    assert parse_locations(text) == [
        Location("src/main/java/com/acme/Cart.java", 12, None, "cannot find symbol", "error", "javac"),
        Location("/home/u/shop/src/main/java/com/acme/Order.java", 31, 18,
                 "incompatible types: String cannot be converted to int", "error", "javac"),
    ]


def test_gcc_and_clang():
    text = '''\
src/ledger.c: In function 'post':
src/ledger.c:42:13: error: 'x' undeclared (first use in this function)
   42 |     total = x + 1;
      |             ^
In file included from src/main.c:3:
include/ledger.h:7:1: warning: control reaches end of non-void function [-Wreturn-type]
'''
    assert rows(text) == [
        ("src/ledger.c", 42, 13, "error", "gcc"),
        ("src/main.c", 3, None, None, "generic"),
        ("include/ledger.h", 7, 1, "warning", "gcc"),
    ]


def test_pytest_failure_location_and_short_summary():
    text = '''\
    def test_total():
>       assert cart.total() == 4
E       assert 3 == 4

tests/test_cart.py:12: AssertionError
=========================== short test summary info ============================
FAILED tests/test_cart.py::TestCart::test_total - AssertionError: assert 3 == 4
ERROR tests/test_db.py - ModuleNotFoundError: No module named 'psycopg'
'''
    assert parse_locations(text) == [
        Location("tests/test_cart.py", 12, None, "AssertionError", "error", "pytest"),
        Location("tests/test_cart.py", None, None, "AssertionError: assert 3 == 4", "error", "pytest"),
        Location("tests/test_db.py", None, None, "ModuleNotFoundError: No module named 'psycopg'", "error", "pytest"),
    ]


def test_jest_failed_file_is_a_location_and_its_at_lines_are_left_to_frames():
    text = '''\
 FAIL  src/cart.test.ts
  Cart
    ✓ starts empty (2 ms)
    ✕ adds items (5 ms)

  ● Cart › adds items

    expect(received).toBe(expected) // Object.is equality

    Expected: 3
    Received: 2

      10 |   cart.add(item);
    > 11 |   expect(cart.total()).toBe(3);
         |                        ^

      at Object.<anonymous> (src/cart.test.ts:11:24)

 PASS  src/money.test.ts
'''
    assert parse_locations(text) == [Location("src/cart.test.ts", None, None, None, "error", "jest")]


def test_msbuild_windows_paths_and_php_on_line_form():
    text = '''\
C:\\src\\Shop\\Cart.cs(12,5): error CS0103: The name 'x' does not exist in the current context [C:\\src\\Shop\\Shop.csproj]
PHP Parse error:  syntax error, unexpected token "}" in /var/www/src/Cart.php on line 42
C:\\src\\shop\\cart.py:3: DeprecationWarning: cart.total is deprecated
'''
    assert rows(text) == [
        ("C:/src/Shop/Cart.cs", 12, 5, "error", "generic"),
        ("/var/www/src/Cart.php", 42, None, "error", "generic"),
        ("C:/src/shop/cart.py", 3, None, None, "generic"),
    ]


def test_generic_locations_in_prose_keep_their_line_as_message_and_repeats_are_dropped():
    text = "Since Monday src/cart.py:12 raises, and so does lib/money.rb:7:3 (see src/cart.py:12 again).\n"
    assert parse_locations(text) == [
        Location("src/cart.py", 12, None, text.strip(), None, "generic"),
        Location("lib/money.rb", 7, 3, text.strip(), None, "generic"),
    ]


def test_file_urls_count_but_web_urls_times_versions_and_bare_numbers_do_not():
    assert rows("open file:///home/u/app/src/cart.js:3:9 in the editor") == [("/home/u/app/src/cart.js", 3, 9, None, "generic")]
    prose = '''\
The deploy at 12:30:45 broke http://localhost:8080/a.py:3 and https://shop.example.com:443/cart.
Python 3.11.2, node v20.11.0 and v1.2.3:4 are installed; see line 3 of the docs.
Postgres listens on 10.0.0.1:5432 and [::1]:8080, also fe80::1:2.
Error at 12:5 in the second column.
'''
    assert parse_locations(prose) == []


def test_stack_frame_lines_are_not_locations():
    text = '''\
  File "/srv/app/stock.py", line 31, in reserve
    at Ledger.post (/home/u/app/src/ledger.ts:12:11)
	/home/u/shop/server.go:42 +0x1d
/app/lib/cart.rb:42:in 'Cart#add': undefined method '+' for nil (NoMethodError)
             at ./src/cart.rs:42:5
'''
    assert parse_locations(text) == []


def test_looks_like_path():
    assert looks_like_path("src/cart.py")
    assert looks_like_path("Cart.java")
    assert looks_like_path("Makefile")
    assert looks_like_path("bin/shop")
    assert not looks_like_path("12")
    assert not looks_like_path("3.11.2")
    assert not looks_like_path("localhost")
    assert not looks_like_path("12/25")
    assert not looks_like_path("http://x/a.py")


def test_huge_lines_of_separators_are_read_in_linear_time():
    # A quadratic pattern would take minutes on these; linear ones finish at once.
    for text in (":(" * 500_000, ":" * 1_000_000, "(" * 1_000_000, "1:(" * 300_000, "a:1 " * 250_000):
        assert parse_locations(text) == []


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=400))
def test_random_text_never_raises(text):
    assert all(isinstance(location, Location) for location in parse_locations(text))


PIECES = ("src/a.py:", "12", ":5", ": error: ", "(3,4)", " --> ", "error[E1]: x", "  1:2  error  m  r",
          "C:\\x\\", "file:///", "FAIL ", "FAILED ", "::", " on line ", "PHP Fatal error: ", "\n", " ", "\t")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=30))
def test_pieces_of_tool_output_never_raise(parts):
    for location in parse_locations("".join(parts)):
        assert location.path and "\\" not in location.path
