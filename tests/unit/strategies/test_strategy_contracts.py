"""The contracts strategy: an HTTP route to its OpenAPI definition and the handler registering it."""

from __future__ import annotations

import pytest
from strategy_helpers import context_for, heaviest

from rag_lsp.retrieval.strategies import contracts
from rag_lsp.retrieval.strategies.base import Skipped

REPO = {
    "api/openapi.yaml": '''openapi: 3.0.0
paths:
  /api/v1/orders/{orderId}:
    get:
      operationId: getOrder
''',
    "server/routes/orders.js": '''const router = require("express").Router();

router.get("/orders/:orderId", async (req, res) => {
  res.json(await load(req.params.orderId));
});

module.exports = router;
''',
    "server/routes/carts.js": '''router.get("/carts/:cartId", (req, res) => res.json({}));
''',
    "proto/orders.proto": '''service Orders {
  rpc GetOrder(GetOrderRequest) returns (Order) {
    option (google.api.http) = { get: "/api/v1/orders/{order_id}" };
  }
}
''',
}


def test_a_route_finds_its_contracts_and_its_handler(tmp_path):
    found = contracts.run(context_for(tmp_path, REPO, "GET /api/v1/orders/42 returns 500 since the upgrade"))
    weights = heaviest(found)
    assert set(weights) == {"api/openapi.yaml", "proto/orders.proto", "server/routes/orders.js"}
    # The handler registers only the tail of the path under a mounted prefix, which counts less.
    assert weights["server/routes/orders.js"] < weights["api/openapi.yaml"] == weights["proto/orders.proto"]
    reasons = {f.path: f.reason for f in found}
    assert reasons["api/openapi.yaml"] == "defines route GET /api/v1/orders/42"
    assert reasons["server/routes/orders.js"] == "registers route GET /api/v1/orders/42"


def test_no_route_is_a_skip(tmp_path):
    with pytest.raises(Skipped):
        contracts.run(context_for(tmp_path, REPO, "orders are slow"))
