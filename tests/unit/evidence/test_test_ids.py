"""Test ids come out of every runner's output, merged per test, with failures marked."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp.retrieval.evidence import TestId, parse_test_ids


def rows(text: str) -> list[tuple]:
    return [(t.path, t.names, t.module, t.framework, t.failed) for t in parse_test_ids(text)]


def test_pytest_verbose_results_and_summary_merge_and_drop_parameters():
    text = '''\
tests/test_cart.py::TestCart::test_total[a-b] FAILED                     [ 33%]
tests/test_cart.py::TestCart::test_total[two items] PASSED               [ 66%]
tests/test_cart.py::test_empty PASSED                                    [100%]
=========================== short test summary info ============================
FAILED tests/test_cart.py::TestCart::test_total[a-b] - AssertionError: assert 3 == 4
ERROR tests/test_db.py - ModuleNotFoundError: No module named 'psycopg'
'''
    assert rows(text) == [
        ("tests/test_cart.py", ("TestCart", "test_total"), None, "pytest", True),
        ("tests/test_cart.py", ("test_empty",), None, "pytest", False),
        ("tests/test_db.py", (), None, "pytest", True),
    ]


def test_pytest_ids_in_prose_fail_only_next_to_a_failure_word():
    text = '''\
Since yesterday tests/test_cart.py::test_total fails on CI, while tests\\test_api.py::TestApi::test_get is fine.
Broken: tests/test_money.py::test_round. Also src/cart.py changed.
'''
    assert rows(text) == [
        ("tests/test_cart.py", ("test_total",), None, "pytest", True),
        ("tests/test_api.py", ("TestApi", "test_get"), None, "pytest", False),
        ("tests/test_money.py", ("test_round",), None, "pytest", True),
    ]


def test_unittest_new_and_old_id_forms_and_verbose_results():
    text = '''\
test_total (tests.test_cart.TestCart.test_total) ... FAIL
test_empty (tests.test_cart.TestCart.test_empty)
An empty cart totals zero. ... ok

======================================================================
FAIL: test_total (tests.test_cart.TestCart.test_total)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/srv/shop/tests/test_cart.py", line 12, in test_total
    self.assertEqual(cart.total(), 4)
AssertionError: 3 != 4

======================================================================
ERROR: test_old (tests.test_api.TestApi)
----------------------------------------------------------------------
FAILED (failures=1, errors=1)
'''
    assert rows(text) == [
        (None, ("TestCart", "test_total"), "tests.test_cart.TestCart", "unittest", True),
        (None, ("TestCart", "test_empty"), "tests.test_cart.TestCart", "unittest", False),
        (None, ("TestApi", "test_old"), "tests.test_api.TestApi", "unittest", True),
    ]


def test_go_subtests_get_the_package_of_the_following_package_line():
    text = '''\
=== RUN   TestTotal
=== RUN   TestTotal/empty_cart
    cart_test.go:14: Total() = 3, want 4
--- FAIL: TestTotal (0.00s)
    --- FAIL: TestTotal/empty_cart (0.00s)
    --- PASS: TestTotal/one_item (0.00s)
FAIL
FAIL	github.com/acme/shop/cart	0.012s
--- FAIL: TestCheckout (0.01s)
FAIL	github.com/acme/shop/checkout	0.020s
ok  	github.com/acme/shop/money	(cached)
'''
    assert rows(text) == [
        (None, ("TestTotal",), "github.com/acme/shop/cart", "go", True),
        (None, ("TestTotal", "empty_cart"), "github.com/acme/shop/cart", "go", True),
        (None, ("TestTotal", "one_item"), "github.com/acme/shop/cart", "go", False),
        (None, ("TestCheckout",), "github.com/acme/shop/checkout", "go", True),
    ]


def test_cargo_results_failure_sections_doc_tests_and_nextest():
    text = '''\
running 3 tests
test cart::tests::adds ... FAILED
test cart::tests::removes ... ok
test src/lib.rs - cart::Cart::add (line 10) ... FAILED

failures:

---- cart::tests::adds stdout ----
thread 'cart::tests::adds' panicked at src/cart.rs:42:5:
assertion `left == right` failed
  left: 3
 right: 4

failures:
    cart::tests::adds
    cart::tests::empty

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
        FAIL [   0.004s] shop money::tests::rounds
        PASS [   0.002s] shop money::tests::adds
'''
    assert rows(text) == [
        (None, ("cart", "tests", "adds"), "cart::tests", "cargo", True),
        (None, ("cart", "tests", "removes"), "cart::tests", "cargo", False),
        ("src/lib.rs", ("cart", "Cart", "add"), "cart::Cart", "cargo", True),
        (None, ("cart", "tests", "empty"), "cart::tests", "cargo", True),
        (None, ("money", "tests", "rounds"), "money::tests", "cargo", True),
        (None, ("money", "tests", "adds"), "money::tests", "cargo", False),
    ]


def test_jest_listing_nests_tests_in_describe_blocks_and_headings_name_failures():
    text = '''\
 FAIL  src/cart.test.ts
  Cart
    ✓ starts empty (2 ms)
    totals
      ✕ adds items (5 ms)
      ○ skipped applies discounts
  checkout
    ✕ pays (1 ms)

  ● Cart › totals › adds items

    expect(received).toBe(expected) // Object.is equality

    Expected: 3
    Received: 2

      at Object.<anonymous> (src/cart.test.ts:11:24)

  ● checkout › pays

 PASS  src/money.test.ts
'''
    assert rows(text) == [
        ("src/cart.test.ts", ("Cart", "starts empty"), None, "jest", False),
        ("src/cart.test.ts", ("Cart", "totals", "adds items"), None, "jest", True),
        ("src/cart.test.ts", ("Cart", "totals", "applies discounts"), None, "jest", False),
        ("src/cart.test.ts", ("checkout", "pays"), None, "jest", True),
    ]


def test_a_jest_heading_without_its_file_line():
    assert rows("  ● Cart › adds items\n\n    expect(received).toBe(expected)\n") == [
        (None, ("Cart", "adds items"), None, "jest", True),
    ]


def test_vitest_file_results_and_failure_headings():
    text = '''\
 ❯ src/cart.test.ts (2 tests | 1 failed) 5ms
   × Cart > adds items 3ms
     → expected 2 to be 3
   ✓ Cart > starts empty 1ms
 ✓ src/money.test.ts (1 test) 2ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/cart.test.ts > Cart > adds items
AssertionError: expected 2 to be 3
'''
    assert rows(text) == [
        ("src/cart.test.ts", ("Cart", "adds items"), None, "vitest", True),
        ("src/cart.test.ts", ("Cart", "starts empty"), None, "vitest", False),
    ]


def test_surefire_2_junit4_ids_and_failed_tests_section():
    text = '''\
Running com.acme.CartTest
Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 sec <<< FAILURE! - in com.acme.CartTest
testTotal(com.acme.CartTest)  Time elapsed: 0.01 sec  <<< FAILURE!
java.lang.AssertionError: expected:<3> but was:<2>
	at com.acme.CartTest.testTotal(CartTest.java:42)

Results :

Failed tests: 
  testTotal(com.acme.CartTest): expected:<3> but was:<2>
  testAdd(com.acme.OrderTest): expected:<1> but was:<0>
'''
    assert rows(text) == [
        (None, ("CartTest",), "com.acme.CartTest", "junit", True),
        (None, ("CartTest", "testTotal"), "com.acme.CartTest", "junit", True),
        (None, ("OrderTest", "testAdd"), "com.acme.OrderTest", "junit", True),
    ]


def test_surefire_3_summary_entries_resolve_simple_class_names():
    text = '''\
[INFO] Running com.acme.CartTest
[ERROR] Tests run: 3, Failures: 2, Errors: 0, Skipped: 0, Time elapsed: 0.052 s <<< FAILURE! -- in com.acme.CartTest
[ERROR] com.acme.CartTest.testTotal -- Time elapsed: 0.010 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <3> but was: <2>
	at com.acme.CartTest.testTotal(CartTest.java:42)

[INFO] Running com.acme.MoneyTest
[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.003 s -- in com.acme.MoneyTest
[INFO] Results:
[INFO] 
[ERROR] Failures: 
[ERROR]   CartTest.testTotal:42 expected: <3> but was: <2>
[ERROR]   CartTest.testAdd:50->assertLine:80 
Expected: is <1>
     but: was <2>
[INFO] 
[ERROR] Tests run: 4, Failures: 2, Errors: 0, Skipped: 0
'''
    assert rows(text) == [
        (None, ("CartTest",), "com.acme.CartTest", "junit", True),
        (None, ("CartTest", "testTotal"), "com.acme.CartTest", "junit", True),
        (None, ("MoneyTest",), "com.acme.MoneyTest", "junit", False),
        (None, ("CartTest", "testAdd"), "com.acme.CartTest", "junit", True),
    ]


def test_gradle_results():
    text = '''\
CartTest > testTotal() FAILED
    org.opentest4j.AssertionFailedError at CartTest.java:42
com.acme.OrderTest > places an order() PASSED
'''
    assert rows(text) == [
        (None, ("CartTest", "testTotal"), "CartTest", "junit", True),
        (None, ("OrderTest", "places an order"), "com.acme.OrderTest", "junit", False),
    ]


def test_rspec_rerun_lines():
    text = '''\
Finished in 0.02 seconds (files took 0.1 seconds to load)
3 examples, 2 failures

Failed examples:

rspec ./spec/cart_spec.rb:12 # Cart adds items
rspec ./spec/cart_spec.rb[1:2:1] # Cart totals with a discount
'''
    assert rows(text) == [
        ("spec/cart_spec.rb", ("Cart adds items",), None, "rspec", True),
        ("spec/cart_spec.rb", ("Cart totals with a discount",), None, "rspec", True),
    ]


def test_phpunit_sections_say_whether_their_tests_failed():
    text = '''\
There was 1 failure:

1) Tests\\CartTest::testTotal
Failed asserting that 2 matches expected 3.

/var/www/tests/CartTest.php:42

There was 1 risky test:

1) Tests\\CartTest::testNothing with data set #0 (1, 2)
This test did not perform any assertions

FAILURES!
Tests: 3, Assertions: 3, Failures: 1, Risky: 1.
'''
    assert rows(text) == [
        (None, ("CartTest", "testTotal"), "Tests\\CartTest", "phpunit", True),
        (None, ("CartTest", "testNothing"), "Tests\\CartTest", "phpunit", False),
    ]


def test_generic_failed_lines_need_an_id_shaped_word():
    text = '''\
FAILED: cart_integration_test
[FAIL] Acme.Tests.CartTests.AddsItems
  Failed Acme.Tests.CartTests.Pays [12 ms]
FAILED tests/smoke/checkout.sh
Failed to connect to the database
FAILED (failures=1)
'''
    assert rows(text) == [
        (None, ("cart_integration_test",), None, "generic", True),
        (None, ("Acme.Tests.CartTests.AddsItems",), None, "generic", True),
        (None, ("Acme.Tests.CartTests.Pays",), None, "generic", True),
        ("tests/smoke/checkout.sh", (), None, "generic", True),
    ]


def test_prose_without_test_ids_gives_nothing():
    prose = '''\
Since 12:30:45 checkout fails for Python 3.11.2 users; see line 3 of the docs at http://localhost:8080/x.py:3.
The test of the cart is broken... ok
'''
    assert parse_test_ids(prose) == []


def test_test_ids_are_frozen_values_not_collected_as_tests():
    test = TestId("tests/test_cart.py", ("test_total",), None, "pytest", True)
    assert parse_test_ids("FAILED tests/test_cart.py::test_total - assert 3 == 4") == [test]
    assert TestId.__test__ is False


def test_huge_lines_of_separators_are_read_in_linear_time():
    # A quadratic pattern would take minutes on these; linear ones finish at once.
    for text in (":(" * 500_000, ":" * 1_000_000, "(" * 1_000_000, "x.py:" * 200_000, "a.py::b[" + "[" * 1_000_000):
        assert len(parse_test_ids(text)) <= 1


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=400))
def test_random_text_never_raises(text):
    assert all(isinstance(test, TestId) for test in parse_test_ids(text))


PIECES = ("tests/a.py", "::", "test_x", "[", "]", " FAILED", "FAILED ", "--- FAIL: ", " (0.00s)", "test a::b ... ",
          "failures:", "    ", "FAIL ", "src/a.test.ts", " › ", " > ", "✕ ", "● ", "[ERROR] ", "Failures:",
          "x(com.A)", "1) A\\B::c", "rspec ./a.rb # ", "\n", " ")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=30))
def test_pieces_of_runner_output_never_raise(parts):
    for test in parse_test_ids("".join(parts)):
        assert test.framework
