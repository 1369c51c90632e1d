"""The enhancement knobs: the cascade request → client settings → operator default, the operator's ceiling,
and refusals that name the bad key."""

from __future__ import annotations

import pytest
from answers import ask
from conftest import write_tree

from rag_lsp.mcp_server.tools import decode
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.retrieval.enhance.knobs import SHIPPED_LIMITS, KnobError, Limit, knob_map, limits_map, resolve
from rag_lsp.retrieval.enhance.plan import REPORT_NO_FEEDBACK
from rag_lsp.server.arguments import ArgumentError
from rag_lsp.workspace.session import Session
from rag_lsp.workspace.settings import Settings, SettingsError, apply_settings

OPERATOR = limits_map({"expand": {"default": 1, "max": 3}, "hyde": {"default": 0, "max": 1},
                       "rerank": {"default": True, "max": True}}, "retrieval.enhancements")
NO_RERANK = limits_map({"rerank": {"default": True, "max": False}}, "retrieval.enhancements")

# (limits, client settings, request, knob, expected value, expected source)
CASES = [
    (OPERATOR, {}, {}, "expand", 1, "operator"),
    (OPERATOR, {"expand": 2}, {}, "expand", 2, "settings"),
    (OPERATOR, {"expand": 2}, {"expand": 0}, "expand", 0, "request"),
    (OPERATOR, {}, {"expand": 3}, "expand", 3, "request"),
    # An agent (an LLM calling the MCP tool) asks for more than the operator allows: clamped to the max.
    (OPERATOR, {}, {"expand": 10}, "expand", 3, "request"),
    (OPERATOR, {"expand": 7}, {}, "expand", 3, "settings"),
    (OPERATOR, {}, {"expand": -4}, "expand", 0, "request"),
    (OPERATOR, {}, {}, "hyde", 0, "operator"),
    (OPERATOR, {}, {"hyde": 5}, "hyde", 1, "request"),
    (OPERATOR, {}, {}, "rerank", True, "operator"),
    (OPERATOR, {"rerank": False}, {}, "rerank", False, "settings"),
    (OPERATOR, {"rerank": False}, {"rerank": True}, "rerank", True, "request"),
    # bool → raw AND max: the operator switched the rerank off, nobody switches it on.
    (NO_RERANK, {}, {"rerank": True}, "rerank", False, "request"),
    (NO_RERANK, {}, {}, "rerank", False, "operator"),
    (limits_map({"expand": {"default": 5, "max": 2}}, "e"), {}, {}, "expand", 2, "operator"),
]


@pytest.mark.parametrize(("limits", "client", "request_knobs", "name", "value", "source"), CASES)
def test_the_value_in_force_is_the_first_set_then_clamped(limits, client, request_knobs, name, value, source):
    resolved = resolve(limits, client, request_knobs)[name]
    assert (resolved.value, resolved.source) == (value, source)
    raw = {**client, **request_knobs}.get(name, dict(limits)[name].default)
    assert resolved.requested == raw and resolved.clamped == (raw != value)


def test_the_shipped_limits_are_the_documented_ones():
    assert dict(SHIPPED_LIMITS) == {"expand": Limit(1, 3), "hyde": Limit(0, 1), "rerank": Limit(True, True)}


@pytest.mark.parametrize(("raw", "message"), [
    ({"expnad": 2}, "unknown enhancement 'expnad'"),
    ({"expand": "2"}, "'enhancements.expand' must be an integer"),
    ({"expand": True}, "'enhancements.expand' must be an integer"),
    ({"rerank": 1}, "'enhancements.rerank' must be true or false"),
    ([1], "must be an object"),
])
def test_a_bad_knob_map_is_refused_naming_the_key(raw, message):
    with pytest.raises(KnobError, match=message):
        knob_map(raw, "enhancements")


def test_operator_file_limits_and_their_errors():
    assert dict(limits_map({"hyde": {"max": 2}}, "r"))["hyde"] == Limit(0, 2)
    with pytest.raises(KnobError, match="unknown enhancement 'speed'"):
        limits_map({"speed": {"max": 2}}, "retrieval.enhancements")
    with pytest.raises(KnobError, match=r"retrieval.enhancements.expand' must be \{default, max\}"):
        limits_map({"expand": {"ceiling": 2}}, "retrieval.enhancements")


def test_only_the_operator_file_sets_the_ceilings():
    client, warnings = apply_settings(Settings(), {"retrieval": {"enhancements": {"expand": {"max": 50}}},
                                                   "enhancements": {"expand": 50}})
    assert dict(client.retrieval.limits)["expand"] == Limit(1, 3)
    assert any("operator's" in warning for warning in warnings)
    operator, _ = apply_settings(client, {"retrieval": {"enhancements": {"expand": {"max": 2}}}}, overlay=True)
    assert resolve(operator.retrieval.limits, operator.enhancements, {})["expand"].value == 2
    with pytest.raises(SettingsError, match="unknown enhancement 'expnad'"):
        apply_settings(Settings(), {"enhancements": {"expnad": 1}})


def test_request_parameters_are_checked_and_clamped_later():
    call = decode("context", {"question": "q", "enhancements": {"expand": 10, "rerank": False}}, Settings(),
                  lambda *_: None)  # type: ignore[arg-type]
    assert dict(call.knobs) == {"expand": 10, "rerank": False}  # type: ignore[union-attr]
    with pytest.raises(ArgumentError, match="unknown enhancement 'fast'"):
        decode("context", {"question": "q", "enhancements": {"fast": True}}, Settings(), lambda *_: None)  # type: ignore[arg-type]


def test_a_report_gets_no_feedback_round_and_the_answer_says_why(tmp_path):
    tree = {f"app/filler_{n}.py": f"def task_{n}():\n    return 'chore number {n}'\n" for n in range(30)}
    tree["app/refunds.py"] = "def issue_refund(order):\n    return reverse_ledger_entry(order.payment)\n"
    session = Session(use_cache=False)
    session.add_root(write_tree(tmp_path / "ws", tree))
    session.index_roots()
    question = "how is a refund issued"
    report = (f"{question}? When a customer asks for their money back the refund is issued twice and the order "
              "shows two refunds, although the payment was only taken once and the customer was told that a "
              "single refund is all they would ever receive from the shop.")
    try:
        asked = ask(session, ContextRequest(question))["retrieval"]["enhancements"]["expand"]
        reported = ask(session, ContextRequest(report))["retrieval"]["enhancements"]["expand"]
    finally:
        session.close()
    assert (asked["method"], asked["variants"], asked["degraded"]) == ("prf", 1, None)
    assert (reported["method"], reported["variants"], reported["degraded"]) == ("prf", 0, REPORT_NO_FEEDBACK)
