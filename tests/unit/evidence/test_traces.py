"""Stack frames come out of every supported trace format innermost first, with library frames marked."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp.retrieval.evidence import Frame, parse_frames
from rag_lsp.retrieval.evidence.frames import normalise_path
from rag_lsp.retrieval.evidence.traces import is_frame_line


def rows(text: str) -> list[tuple]:
    """(path, line, function, depth, library, module) of every frame: what a retrieval strategy uses."""
    return [(f.path, f.line, f.function, f.depth, f.library, f.module) for f in parse_frames(text)]


PYTHON_CHAINED = '''\
Traceback (most recent call last):
  File "/srv/app/inventory/api.py", line 12, in handle
    return stock.reserve(sku, n)
           ^^^^^^^^^^^^^^^^^^^^^
  File "/srv/app/.venv/lib/python3.11/site-packages/retry/api.py", line 73, in retry_decorator
    return __retry_internal(partial(f, *args, **kwargs), exceptions, tries)
  File "/srv/app/inventory/stock.py", line 31, in reserve
    raise KeyError(sku)
KeyError: 'sku-1'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/usr/lib/python3.11/asyncio/runners.py", line 118, in run
    return self._loop.run_until_complete(task)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/srv/app/inventory/api.py", line 14, in handle
    raise LookupError("no stock") from None
LookupError: no stock
'''


def test_python_traceback_is_reversed_and_chained_exceptions_are_separate_traces():
    assert rows(PYTHON_CHAINED) == [
        ("/srv/app/inventory/stock.py", 31, "reserve", 0, False, None),
        ("/srv/app/.venv/lib/python3.11/site-packages/retry/api.py", 73, "retry_decorator", 1, True, None),
        ("/srv/app/inventory/api.py", 12, "handle", 2, False, None),
        ("/srv/app/inventory/api.py", 14, "handle", 0, False, None),
        ("/usr/lib/python3.11/asyncio/runners.py", 118, "run", 1, True, None),
        ("<frozen runpy>", 198, "_run_module_as_main", 2, True, None),
    ]
    assert {frame.language for frame in parse_frames(PYTHON_CHAINED)} == {"python"}


def test_python_recursion_note_and_exception_groups_stay_inside_their_traces():
    recursion = '''\
Traceback (most recent call last):
  File "C:\\Users\\u\\shop\\tree.py", line 9, in <module>
    walk(root)
  File "C:\\Users\\u\\shop\\tree.py", line 5, in walk
    return walk(node.parent)
           ^^^^^^^^^^^^^^^^^
  [Previous line repeated 996 more times]
  File "C:\\Users\\u\\shop\\tree.py", line 4, in walk
    if node is None:
RecursionError: maximum recursion depth exceeded
'''
    assert [(path, line, depth) for path, line, _, depth, _, _ in rows(recursion)] == [
        ("C:/Users/u/shop/tree.py", 4, 0), ("C:/Users/u/shop/tree.py", 5, 1), ("C:/Users/u/shop/tree.py", 9, 2),
    ]
    group = '''\
  + Exception Group Traceback (most recent call last):
  |   File "/srv/app/main.py", line 5, in <module>
  |     run()
  | ExceptionGroup: jobs failed (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/srv/app/jobs.py", line 9, in job
    |     raise ValueError("bad")
    | ValueError: bad
    +------------------------------------
'''
    assert rows(group) == [("/srv/app/main.py", 5, "<module>", 0, False, None), ("/srv/app/jobs.py", 9, "job", 0, False, None)]


PYTEST_LONG = '''\
=================================== FAILURES ===================================
_________________________________ test_reserve _________________________________

    def test_reserve():
        stock = Stock()
>       stock.reserve("sku", 3)

tests/test_stock.py:12: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

self = <inventory.stock.Stock object at 0x7f3a2c1d0e50>, sku = 'sku', n = 3

    def reserve(self, sku, n):
        if n > self.levels.get(sku, 0):
>           raise KeyError(sku)
E           KeyError: 'sku'

inventory/stock.py:31: KeyError
=========================== short test summary info ============================
FAILED tests/test_stock.py::test_reserve - KeyError: 'sku'
'''


def test_pytest_long_format_takes_function_names_from_the_shown_source():
    assert rows(PYTEST_LONG) == [
        ("inventory/stock.py", 31, "reserve", 0, False, None),
        ("tests/test_stock.py", 12, "test_reserve", 1, False, None),
    ]


def test_pytest_short_format():
    text = '''\
____________________________ TestStock.test_reserve ____________________________
tests/test_stock.py:12: in test_reserve
    stock.reserve("sku", 3)
inventory/stock.py:29: in reserve
    self._check(sku)
.venv/lib/python3.12/site-packages/pydantic/main.py:212: in __init__
    validated_self = self.__pydantic_validator__.validate_python(data, self_instance=self)
E   pydantic_core._pydantic_core.ValidationError: 1 validation error for Level
'''
    assert rows(text) == [
        (".venv/lib/python3.12/site-packages/pydantic/main.py", 212, "__init__", 0, True, None),
        ("inventory/stock.py", 29, "reserve", 1, False, None),
        ("tests/test_stock.py", 12, "test_reserve", 2, False, None),
    ]


NODE = '''\
/home/u/app/src/ledger.ts:12
    const account = this.accounts[entry.currency].amount;
                                                  ^

TypeError: Cannot read properties of undefined (reading 'amount')
    at Ledger.post (/home/u/app/src/ledger.ts:12:11)
    at /home/u/app/src/routes.js:3:9
    at Array.forEach (<anonymous>)
    at async Promise.all (index 0)
    at new Checkout (file:///C:/shop/web/checkout.mjs:1:2)
    at Layer.handle [as handle_request] (/home/u/app/node_modules/express/lib/router/layer.js:95:5)
    at Module._compile (node:internal/modules/cjs/loader:1256:14)

Node.js v20.11.0
'''


def test_v8_frames_keep_urls_paths_and_skip_frames_without_a_file():
    assert rows(NODE) == [
        ("/home/u/app/src/ledger.ts", 12, "Ledger.post", 0, False, None),
        ("/home/u/app/src/routes.js", 3, None, 1, False, None),
        ("C:/shop/web/checkout.mjs", 1, "Checkout", 2, False, None),
        ("/home/u/app/node_modules/express/lib/router/layer.js", 95, "Layer.handle", 3, True, None),
        ("node:internal/modules/cjs/loader", 1256, "Module._compile", 4, True, None),
    ]
    first = parse_frames(NODE)[0]
    assert (first.column, first.language) == (11, "javascript")


def test_firefox_and_safari_frames_keep_the_path_of_the_url():
    text = '''\
TypeError: entry is undefined
post@http://localhost:8080/static/ledger.js:12:11
Ledger/<@http://localhost:8080/static/vendor/lodash.js:88:3
@http://localhost:8080/static/app.js:3:9
'''
    assert rows(text) == [
        ("/static/ledger.js", 12, "post", 0, False, None),
        ("/static/vendor/lodash.js", 88, "Ledger/<", 1, True, None),
        ("/static/app.js", 3, None, 2, False, None),
    ]


GO_PANIC = '''\
panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4553a8]

goroutine 1 [running]:
github.com/acme/shop/cart.(*Cart).Add(...)
	/home/u/shop/cart/cart.go:18
main.(*Server).Start(0xc000010000)
	/home/u/shop/server.go:42 +0x1d
main.main()
	/home/u/shop/main.go:10 +0x25

goroutine 6 [chan receive]:
runtime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)
	/usr/local/go/src/runtime/proc.go:398 +0xce
gopkg.in/yaml%2ev3.(*decoder).unmarshal(0xc0000a6000)
	/root/go/pkg/mod/gopkg.in/yaml.v3@v3.0.1/decode.go:483 +0x4d
main.worker(0xc00001c0c0)
	/home/u/shop/worker.go:9 +0x3c
created by main.main in goroutine 1
	/home/u/shop/main.go:8 +0x45
exit status 2
'''


def test_go_goroutines_are_separate_traces_with_package_paths():
    assert rows(GO_PANIC) == [
        ("/home/u/shop/cart/cart.go", 18, "github.com/acme/shop/cart.(*Cart).Add", 0, False, "github.com/acme/shop/cart"),
        ("/home/u/shop/server.go", 42, "main.(*Server).Start", 1, False, "main"),
        ("/home/u/shop/main.go", 10, "main.main", 2, False, "main"),
        ("/usr/local/go/src/runtime/proc.go", 398, "runtime.gopark", 0, True, "runtime"),
        ("/root/go/pkg/mod/gopkg.in/yaml.v3@v3.0.1/decode.go", 483, "gopkg.in/yaml%2ev3.(*decoder).unmarshal", 1, True,
         "gopkg.in/yaml%2ev3"),
        ("/home/u/shop/worker.go", 9, "main.worker", 2, False, "main"),
        ("/home/u/shop/main.go", 8, "main.main", 3, False, "main"),
    ]


JVM = '''\
Exception in thread "main" java.lang.IllegalStateException: order 42 failed
	at com.acme.orders.OrderService.place(OrderService.java:57)
	at com.acme.orders.OrderController.post(OrderController.kt:31)
	at java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)
	at java.base/java.lang.Thread.run(Thread.java:833)
Caused by: java.sql.SQLException: connection refused
	at com.acme.db.Pool.$anonfun$get$1(Pool.scala:88)
	at jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
	at com.acme.orders.OrderService.place(OrderService.java:55)
	... 3 more
'''


def test_jvm_causes_come_root_cause_first_with_packages_as_modules():
    assert rows(JVM) == [
        ("Pool.scala", 88, "com.acme.db.Pool.$anonfun$get$1", 0, False, "com.acme.db"),
        (None, None, "jdk.internal.reflect.NativeMethodAccessorImpl.invoke0", 1, True, "jdk.internal.reflect"),
        ("OrderService.java", 55, "com.acme.orders.OrderService.place", 2, False, "com.acme.orders"),
        ("OrderService.java", 57, "com.acme.orders.OrderService.place", 0, False, "com.acme.orders"),
        ("OrderController.kt", 31, "com.acme.orders.OrderController.post", 1, False, "com.acme.orders"),
        ("DirectMethodHandleAccessor.java", 103, "jdk.internal.reflect.DirectMethodHandleAccessor.invoke", 2, True,
         "jdk.internal.reflect"),
        ("Thread.java", 833, "java.lang.Thread.run", 3, True, "java.lang"),
    ]
    assert {frame.language for frame in parse_frames(JVM)} == {"java"}


def test_rust_panic_location_and_backtrace():
    text = '''\
thread 'main' panicked at src/cart.rs:42:5:
attempt to subtract with overflow
stack backtrace:
   0: rust_begin_unwind
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs:645:5
   1: core::panicking::panic_fmt
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/panicking.rs:72:14
   2: <shop::cart::Cart as core::ops::Drop>::drop
             at ./src/cart.rs:80:9
   3: shop::cart::Cart::add
             at ./src/cart.rs:42:5
   4: serde_json::de::from_str
             at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde_json-1.0.108/src/de.rs:2676:5
   5: shop::main
             at ./src/main.rs:7:5
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
'''
    assert rows(text) == [
        ("src/cart.rs", 42, None, 0, False, None),
        ("/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs", 645, "rust_begin_unwind", 0, True, None),
        ("/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/panicking.rs", 72, "core::panicking::panic_fmt", 1, True,
         "core::panicking"),
        ("src/cart.rs", 80, "<shop::cart::Cart as core::ops::Drop>::drop", 2, False, "shop::cart"),
        ("src/cart.rs", 42, "shop::cart::Cart::add", 3, False, "shop::cart"),
        ("/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde_json-1.0.108/src/de.rs", 2676,
         "serde_json::de::from_str", 4, True, "serde_json::de"),
        ("src/main.rs", 7, "shop::main", 5, False, "shop"),
    ]
    assert parse_frames(text)[0].column == 5


def test_rust_old_panic_format_and_full_backtrace_with_inlined_frames():
    old = "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/cart.rs:42:5\n"
    assert rows(old) == [("src/cart.rs", 42, None, 0, False, None)]
    full = '''\
stack backtrace:
   0:     0x55d5c0c0a1b2 - std::backtrace_rs::backtrace::libunwind::trace::h5f2b9d1c4e3a7b60
                               at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/../../backtrace/src/backtrace/libunwind.rs:104:5
  14:     0x55d5c0c0b0e1 - shop::cart::Cart::add::h0123456789abcdef
                               at /home/u/shop/src/cart.rs:42:5
                           shop::main::h1111222233334444
                               at /home/u/shop/src/main.rs:7:5
  15:     0x55d5c0c0b1f0 - __libc_start_main
'''
    assert rows(full) == [
        ("/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/../../backtrace/src/backtrace/libunwind.rs", 104,
         "std::backtrace_rs::backtrace::libunwind::trace", 0, True, "std::backtrace_rs::backtrace::libunwind"),
        ("/home/u/shop/src/cart.rs", 42, "shop::cart::Cart::add", 1, False, "shop::cart"),
        ("/home/u/shop/src/main.rs", 7, "shop::main", 2, False, "shop"),
    ]


def test_gdb_backtrace_with_a_wrapped_frame_and_frames_without_source():
    text = '''\
Program received signal SIGSEGV, Segmentation fault.
0x000055555555513d in Ledger::post (this=0x7fffffffe0f0, e=...) at /home/u/ledger.cpp:42
42	  accounts[e.currency].push_back(e);
(gdb) bt
#0  0x000055555555513d in Ledger::post (this=0x7fffffffe0f0, e=...) at /home/u/ledger.cpp:42
#1  0x00005555555551a2 in main () at main.c:7
#2  0x00007ffff7829d90 in __libc_start_call_main (main=main@entry=0x555555555189 <main>, argc=argc@entry=1, argv=0x7fffffffe1a8)
    at ../sysdeps/nptl/libc_start_call_main.h:58
#3  0x00007ffff7829e40 in __libc_start_main_impl () from /lib/x86_64-linux-gnu/libc.so.6
#4  0x0000555555555065 in _start ()
'''
    assert rows(text) == [
        ("/home/u/ledger.cpp", 42, "Ledger::post", 0, False, None),
        ("main.c", 7, "main", 1, False, None),
        ("../sysdeps/nptl/libc_start_call_main.h", 58, "__libc_start_call_main", 2, True, None),
    ]
    assert parse_frames(text)[0].language == "c"


def test_address_sanitizer_stacks_are_separate_traces_and_skip_binary_only_frames():
    text = '''\
==12345==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x4f5e2b bp 0x7ffc5d0 sp 0x7ffc5c8
READ of size 4 at 0x602000000010 thread T0
    #0 0x4f5e2b in post /home/u/ledger.c:42:13
    #1 0x4f6a10 in main /home/u/main.c:7:3
    #2 0x7f3c1e0b8d8f in __libc_start_call_main csu/../sysdeps/nptl/libc_start_call_main.h:58:16
    #3 0x41d3a4 in _start (/home/u/a.out+0x41d3a4)

freed by thread T0 here:
    #0 0x4b2d3d in free (/home/u/a.out+0x4b2d3d)
    #1 0x4f5e0a in post /home/u/ledger.c:40:5
'''
    assert rows(text) == [
        ("/home/u/ledger.c", 42, "post", 0, False, None),
        ("/home/u/main.c", 7, "main", 1, False, None),
        ("csu/../sysdeps/nptl/libc_start_call_main.h", 58, "__libc_start_call_main", 2, True, None),
        ("/home/u/ledger.c", 40, "post", 0, False, None),
    ]
    assert parse_frames(text)[0].column == 13


def test_csharp_inner_exception_first_and_async_hops_inside_one_trace():
    text = '''\
Unhandled exception. System.InvalidOperationException: Checkout failed
 ---> System.ArgumentException: Cart is empty (Parameter 'item')
   at Acme.Cart.Add(Item item) in /src/Cart.cs:line 42
   at System.Linq.Enumerable.Sum[TSource](IEnumerable`1 source, Func`2 selector)
   --- End of inner exception stack trace ---
   at Acme.Checkout.Run() in C:\\src\\Checkout.cs:line 10
--- End of stack trace from previous location ---
   at Acme.Program.Main(String[] args) in /src/Program.cs:line 7
'''
    assert rows(text) == [
        ("/src/Cart.cs", 42, "Acme.Cart.Add", 0, False, "Acme.Cart"),
        (None, None, "System.Linq.Enumerable.Sum[TSource]", 1, True, "System.Linq.Enumerable"),
        ("C:/src/Checkout.cs", 10, "Acme.Checkout.Run", 0, False, "Acme.Checkout"),
        ("/src/Program.cs", 7, "Acme.Program.Main", 1, False, "Acme.Program"),
    ]


def test_php_frames_run_the_callee_of_the_next_line_and_the_error_location_comes_first():
    text = '''\
PHP Fatal error:  Uncaught RuntimeException: Cart is empty in /var/www/src/Cart.php:42
Stack trace:
#0 /var/www/src/Checkout.php(17): Acme\\Cart->total()
#1 /var/www/vendor/slim/slim/Slim/App.php(210): Acme\\Checkout->run()
#2 /var/www/public/index.php(9): Slim\\App->run()
#3 {main}
  thrown in /var/www/src/Cart.php on line 42
'''
    assert rows(text) == [
        ("/var/www/src/Cart.php", 42, "Acme\\Cart->total", 0, False, "Acme\\Cart"),
        ("/var/www/src/Checkout.php", 17, "Acme\\Checkout->run", 1, False, "Acme\\Checkout"),
        ("/var/www/vendor/slim/slim/Slim/App.php", 210, "Slim\\App->run", 2, True, "Slim\\App"),
        ("/var/www/public/index.php", 9, None, 3, False, None),
    ]
    parse_error = 'PHP Parse error:  syntax error, unexpected token "}" in /var/www/src/Cart.php on line 42\n'
    assert rows(parse_error) == [("/var/www/src/Cart.php", 42, None, 0, False, None)]


def test_ruby_backtraces_old_and_new_quoting_and_reversed_ruby_2_order():
    text = '''\
/app/lib/cart.rb:42:in 'Cart#add': undefined method '+' for nil (NoMethodError)
	from /app/lib/checkout.rb:10:in 'block in Checkout#run'
	from /usr/local/bundle/gems/rack-3.0.8/lib/rack/builder.rb:5:in `call'
	from /app/bin/shop:5:in '<main>'
'''
    assert rows(text) == [
        ("/app/lib/cart.rb", 42, "Cart#add", 0, False, "Cart"),
        ("/app/lib/checkout.rb", 10, "block in Checkout#run", 1, False, "Checkout"),
        ("/usr/local/bundle/gems/rack-3.0.8/lib/rack/builder.rb", 5, "call", 2, True, None),
        ("/app/bin/shop", 5, "<main>", 3, False, None),
    ]
    ruby_2 = '''\
Traceback (most recent call last):
	2: from /app/bin/shop:5:in `<main>'
	1: from /app/lib/checkout.rb:10:in `run'
/app/lib/cart.rb:42:in `add': undefined method `+' for nil:NilClass (NoMethodError)
'''
    assert [(path, depth) for path, _, _, depth, _, _ in rows(ruby_2)] == [
        ("/app/lib/cart.rb", 0), ("/app/lib/checkout.rb", 1), ("/app/bin/shop", 2),
    ]


def test_swift_fatal_errors_and_crash_report_frames():
    text = '''\
Cart/Cart.swift:42: Fatal error: Unexpectedly found nil while unwrapping an Optional value
Fatal error: Index out of range: file Swift/ContiguousArrayBuffer.swift, line 600

Thread 0 Crashed::  Dispatch queue: com.apple.main-thread
0   libswiftCore.dylib            0x00007ff81c5e8e3e $ss17_assertionFailure_4file4line5flagss5NeverOs12StaticStringV_SSAHSus6UInt32VtF + 30
1   Cart                          0x000000010000355d Cart.add(_:) + 40 (Cart.swift:42)
2   Cart                          0x0000000100003b21 main + 97 (main.swift:7)
3   dyld                          0x00007ff80a8f2366 start + 1942
'''
    assert rows(text) == [
        ("Cart/Cart.swift", 42, None, 0, False, None),
        ("Swift/ContiguousArrayBuffer.swift", 600, None, 0, True, None),
        ("Cart.swift", 42, "Cart.add(_:)", 0, False, None),
        ("main.swift", 7, "main", 1, False, None),
    ]
    assert {frame.language for frame in parse_frames(text)} == {"swift"}


def test_dart_package_uris_name_the_lib_directory_of_their_package():
    text = '''\
Unhandled exception:
Bad state: No element
#0      ListMixin.first (dart:collection/list.dart:52:5)
#1      Cart.add (package:shop/cart.dart:42:5)
<asynchronous suspension>
#2      main (file:///home/u/shop/bin/main.dart:7:3)
#3      _RawReceivePort._handleMessage (dart:isolate-patch/isolate_patch.dart:184:12)
'''
    assert rows(text) == [
        ("dart:collection/list.dart", 52, "ListMixin.first", 0, True, None),
        ("shop/lib/cart.dart", 42, "Cart.add", 1, False, "shop"),
        ("/home/u/shop/bin/main.dart", 7, "main", 2, False, None),
        ("dart:isolate-patch/isolate_patch.dart", 184, "_RawReceivePort._handleMessage", 3, True, None),
    ]
    terse = "package:shop/cart.dart 42:5      Cart.add\ntest/cart_test.dart 12:7         main.<fn>.<fn>\n"
    assert rows(terse) == [
        ("shop/lib/cart.dart", 42, "Cart.add", 0, False, "shop"),
        ("test/cart_test.dart", 12, "main.<fn>.<fn>", 1, False, None),
    ]


def test_elixir_frames_with_and_without_files():
    text = '''\
** (ArithmeticError) bad argument in arithmetic expression
    :erlang.+(nil, 1)
    (my_app 0.1.0) lib/my_app/cart.ex:42: MyApp.Cart.add/2
    (my_app 0.1.0) lib/my_app/checkout.ex:10: anonymous fn/1 in MyApp.Checkout.run/1
    (elixir 1.15.7) lib/enum.ex:1693: Enum."-map/2-lists^map/1-1-"/2
    (stdlib 5.0) erl_eval.erl:744: :erl_eval.do_apply/7
'''
    assert rows(text) == [
        (None, None, ":erlang.+(nil, 1)", 0, True, ":erlang"),
        ("lib/my_app/cart.ex", 42, "MyApp.Cart.add/2", 1, False, "MyApp.Cart"),
        ("lib/my_app/checkout.ex", 10, "anonymous fn/1 in MyApp.Checkout.run/1", 2, False, "MyApp.Checkout"),
        ("lib/enum.ex", 1693, 'Enum."-map/2-lists^map/1-1-"/2', 3, True, "Enum"),
        ("erl_eval.erl", 744, ":erl_eval.do_apply/7", 4, True, ":erl_eval"),
    ]


def test_lldb_frames_take_their_language_from_the_file():
    text = '''\
* thread #1, queue = 'com.apple.main-thread', stop reason = EXC_BAD_ACCESS (code=1, address=0x0)
  * frame #0: 0x0000000100003f5c Cart`Cart.add(_:) at Cart.swift:42:5
    frame #1: 0x0000000100003e10 Cart`ledger_post at ledger.c:12:3
    frame #2: 0x00007ff80a8f2366 dyld`start + 1942
'''
    assert [(f.path, f.line, f.function, f.depth, f.language) for f in parse_frames(text)] == [
        ("Cart.swift", 42, "Cart.add(_:)", 0, "swift"),
        ("ledger.c", 12, "ledger_post", 1, "c"),
    ]


def test_traces_of_several_formats_in_one_paste_keep_their_order():
    text = NODE + "\nand then the server said\n" + GO_PANIC
    languages = [frame.language for frame in parse_frames(text)]
    assert languages == ["javascript"] * 5 + ["go"] * 7


def test_frames_are_frozen_values():
    frame = parse_frames(NODE)[0]
    assert frame == Frame("/home/u/app/src/ledger.ts", 12, 11, "Ledger.post", None, "javascript", 0, False)
    assert hash(frame) == hash(Frame("/home/u/app/src/ledger.ts", 12, 11, "Ledger.post", None, "javascript", 0, False))


def test_prose_times_urls_and_versions_are_not_frames():
    prose = '''\
Since 12:30:45 the checkout page at http://localhost:8080/cart:80 returns 500.
We run Python 3.11.2 and node v20.11.0; see line 3 of the docs.
at the moment nothing else changed, email me@example.com:25
#1 priority is the cart
  1: first we tried restarting
'''
    assert parse_frames(prose) == []


def test_is_frame_line_tells_frames_from_one_line_error_reports():
    assert is_frame_line("    at Ledger.post (/home/u/app/src/ledger.ts:12:11)")
    assert is_frame_line('  File "/srv/app/stock.py", line 31, in reserve')
    assert is_frame_line("\t/home/u/shop/server.go:42 +0x1d")
    assert not is_frame_line("thread 'main' panicked at src/cart.rs:42:5:")
    assert not is_frame_line("src/cart.py:12: error: Incompatible types in assignment")


def test_normalise_path_handles_urls_drives_and_dot_slash():
    assert normalise_path("file:///C:/x/y.js") == "C:/x/y.js"
    assert normalise_path("file:///home/u/y.js") == "/home/u/y.js"
    assert normalise_path("http://localhost:8080/static/a.js?v=3") == "/static/a.js"
    assert normalise_path(".\\src\\a.py") == "src/a.py"
    assert normalise_path("webpack:///./src/cart.js") == "/src/cart.js"


def test_huge_lines_of_separators_are_read_in_linear_time():
    # A quadratic pattern would take minutes on these; linear ones finish at once.
    for text in (":(" * 500_000, ":" * 1_000_000, "(" * 1_000_000, "#0 a " + "(" * 1_000_000, "a.py:" * 200_000):
        assert parse_frames(text) == []


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=400))
def test_random_text_never_raises(text):
    assert all(isinstance(frame, Frame) for frame in parse_frames(text))


FRAGMENTS = (PYTHON_CHAINED + PYTEST_LONG + NODE + GO_PANIC + JVM).splitlines()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(FRAGMENTS), st.integers(0, 200), st.text(max_size=8)), max_size=12))
def test_cut_and_mixed_trace_lines_never_raise(pieces):
    text = "\n".join(line[:cut] + noise for line, cut, noise in pieces)
    frames = parse_frames(text)
    assert all(frame.depth >= 0 for frame in frames)
