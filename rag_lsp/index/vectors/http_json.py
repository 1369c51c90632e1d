"""One JSON request to an OpenAI-compatible endpoint the operator configured (embeddings or chat).

Both uses share the same failure contract: any transport error, HTTP error,
timeout or answer that is not a JSON object becomes ``ProviderError`` with a
short message, so the callers can degrade to the path without the model and
say why. The message echoes at most ``ERROR_ECHO`` characters of what the
server said: its body is untrusted text and must not fill an answer.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import urlsplit

# Characters of a provider's error text that a message may repeat.
ERROR_ECHO = 200
# The largest answer read from an endpoint (a batch of embeddings is a few MB at most).
MAX_RESPONSE_BYTES = 64 << 20


class ProviderError(RuntimeError):
    """An endpoint failed, timed out or answered something unusable."""


def echo(text: object) -> str:
    """Untrusted text cut to ``ERROR_ECHO`` characters, on one line."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= ERROR_ECHO else flat[: ERROR_ECHO - 1] + "…"


def check_url(url: str, where: str) -> str:
    """An http(s) base URL without a trailing slash; raises ValueError naming ``where`` otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"'{where}' must be an http:// or https:// URL, got {url!r}")
    return url.rstrip("/")


def post_json(url: str, payload: dict[str, Any], timeout_s: float, api_key_env: str | None = None) -> dict[str, Any]:
    """POST ``payload`` to ``url`` and return the JSON object it answers; raises ProviderError."""
    # Imported here: urllib.request brings http.client, ssl and email (a hundredth of a second at every start),
    # and only a configured endpoint needs them.
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    key = os.environ.get(api_key_env) if api_key_env else None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read(MAX_RESPONSE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        detail = exc.read(ERROR_ECHO * 4).decode("utf-8", "replace") if exc.fp else ""
        raise ProviderError(f"HTTP {exc.code} from {url}: {echo(detail)}") from None
    except TimeoutError:
        raise ProviderError(f"timeout after {timeout_s:g} s from {url}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise ProviderError(f"timeout after {timeout_s:g} s from {url}") from None
        raise ProviderError(f"cannot reach {url}: {echo(reason)}") from None
    if len(body) > MAX_RESPONSE_BYTES:
        raise ProviderError(f"the answer of {url} exceeds {MAX_RESPONSE_BYTES} bytes")
    try:
        answer = json.loads(body)
    except ValueError:
        raise ProviderError(f"{url} did not answer JSON: {echo(body[:ERROR_ECHO].decode('utf-8', 'replace'))}") from None
    if not isinstance(answer, dict):
        raise ProviderError(f"{url} answered a JSON {type(answer).__name__}, not an object")
    return answer
