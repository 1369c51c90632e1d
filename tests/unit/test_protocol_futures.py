"""pygls keeps each handler's future under its message id until it answers a request; for a notification (a
fresh uuid) and for each step of a generator handler (pygls's own didOpen and didChange) nothing ever took it
out again. The server's protocol drops those once they are done (a request's pygls takes out when it answers)."""

from __future__ import annotations

from rag_lsp.server.app import build_server


def test_finished_notification_handlers_leave_no_future_behind(tmp_path):
    server = build_server(cache_root=tmp_path / "cache", use_cache=False)
    protocol = server.protocol
    try:
        def generator_handler():
            return
            yield

        def plain_handler():
            return None

        for number in range(100):
            protocol._execute_handler(f"note-{number}", generator_handler, protocol._check_handler_result)
            protocol._execute_handler(f"plain-{number}", plain_handler, protocol._check_handler_result)
        assert protocol._request_futures == {}
    finally:
        server.session.close()
