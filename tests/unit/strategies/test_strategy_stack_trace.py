"""The stack_trace strategy: frames of real traces mapped onto a checkout, innermost first."""

from __future__ import annotations

import pytest
from strategy_helpers import chunk_name, context_for

from rag_lsp.retrieval.strategies import stack_trace
from rag_lsp.retrieval.strategies.base import Skipped

PYTHON_REPO = {
    "src/marshmallow/schema.py": "class Schema:\n" + "".join(
        f"    def {name}(self, data):\n        \"\"\"{name}.\"\"\"\n        value = data\n        return value\n\n"
        for name in ("load", "validate", "_do_load", "_invoke_field_validators")),
    "src/marshmallow/fields.py": "class Field:\n    def deserialize(self, value):\n        \"\"\"Deserialize.\"\"\"\n"
                                 "        output = value\n        return output\n",
    "src/marshmallow/utils.py": "def get_value(obj, key):\n    return obj[key]\n",
}

PYTHON_TRACE = '''Traceback (most recent call last):
  File "/_/bug_mschema.py", line 19, in <module>
    'bar': 'invalid',
  File "/_/env/lib/python3.7/site-packages/marshmallow/schema.py", line 8, in validate
    _, errors = self._do_load(data, many, partial=partial, postprocess=False)
  File "/_/env/lib/python3.7/site-packages/marshmallow/fields.py", line 4, in deserialize
    output = self._deserialize(value, attr, data)
  File "/_/env/lib/python3.7/site-packages/click/utils.py", line 65, in invoke
    return callback(*args, **kwargs)
  File "/_/env/lib/python3.7/site-packages/marshmallow/schema.py", line 1000, in _invoke_field_validators
    value = data[field_obj.attribute or field_name]
TypeError: 'NoneType' object is not subscriptable
'''


def test_a_python_traceback_maps_by_path_suffix_innermost_first(tmp_path):
    ctx = context_for(tmp_path, PYTHON_REPO, PYTHON_TRACE)
    found = stack_trace.run(ctx)
    assert [(f.path, f.line, chunk_name(ctx, f)) for f in found] == [
        ("src/marshmallow/schema.py", 1000, "Schema._invoke_field_validators"),
        ("src/marshmallow/fields.py", 4, "Field.deserialize"),
        ("src/marshmallow/schema.py", 8, "Schema.validate"),
    ]
    # The innermost mapped frame weighs most; the user's script and another library's utils.py map nowhere.
    assert [round(f.weight, 4) for f in found] == [0.95, round(0.95 * 0.85, 4), round(0.95 * 0.85**2, 4)]
    assert found[0].reason == ("stack frame /_/env/lib/python3.7/site-packages/marshmallow/schema.py:1000"
                               " in _invoke_field_validators")


GO_REPO = {
    "inventory/stock.go": '''package inventory

type Stock struct{ items []int }

// Reserve takes n items out of the stock.
func (s *Stock) Reserve(n int) int {
	total := 0
	for i := 0; i <= n; i++ {
		total += s.items[i]
	}
	return total
}
''',
    "cmd/shop/main.go": "package main\n\nfunc main() {\n\trun()\n}\n\nfunc run() {\n}\n",
}

GO_PANIC = '''panic: runtime error: index out of range [3] with length 3

goroutine 1 [running]:
github.com/acme/shop/inventory.(*Stock).Reserve(0xc000010018, 0x3)
	/home/ci/go/src/github.com/acme/shop/inventory/stock.go:9 +0x1d
main.main()
	/home/ci/go/src/github.com/acme/shop/cmd/shop/main.go:4 +0x45
exit status 2
'''


def test_a_go_panic(tmp_path):
    ctx = context_for(tmp_path, GO_REPO, GO_PANIC)
    found = stack_trace.run(ctx)
    assert [(f.path, chunk_name(ctx, f)) for f in found] == [
        ("inventory/stock.go", "Stock.Reserve"), ("cmd/shop/main.go", "main")]


JAVA_REPO = {
    "src/main/java/com/acme/ledger/Ledger.java": '''package com.acme.ledger;

public class Ledger {
    public void post(Entry entry) {
        Account account = accounts.get(entry.currency());
        account.add(entry.amount());
    }
}
''',
    "src/main/java/com/acme/legacy/Ledger.java": "package com.acme.legacy;\n\npublic class Ledger {\n}\n",
}

JVM_TRACE = '''Exception in thread "main" java.lang.NullPointerException: no account for USD
	at com.acme.ledger.Ledger.post(Ledger.java:6)
	at com.acme.web.Checkout.pay(Checkout.java:17)
'''


def test_a_jvm_frame_is_narrowed_by_its_package(tmp_path):
    found = stack_trace.run(context_for(tmp_path, JAVA_REPO, JVM_TRACE))
    assert [(f.path, f.weight) for f in found] == [("src/main/java/com/acme/ledger/Ledger.java", 0.95)]


def test_no_frames_is_a_skip(tmp_path):
    with pytest.raises(Skipped, match="no stack frames"):
        stack_trace.run(context_for(tmp_path, GO_REPO, "the stock is wrong after a reservation"))
