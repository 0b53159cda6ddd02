"""HTTP 429 answers: whether an error came from one, and how long its server asked to wait.

The OpenAI client retries a 429 itself (twice by default, after the server's ``Retry-After``); what still
fails reaches the comparison as the cause of an agent's error, and the comparison runs the request
again after the wait read here.
"""

from __future__ import annotations

import email.utils
import time


def retry_after(error: BaseException) -> float | None:
    """The seconds to wait when ``error``, or an error it was raised from, is an HTTP 429 answer: its
    ``Retry-After`` (seconds or an HTTP date; 1 s when it has none); None for any other error."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        response = getattr(current, "response", None)
        status = getattr(current, "status_code", None) or getattr(response, "status_code", None)
        if status == 429:
            headers = getattr(response, "headers", None) or {}
            return _seconds(headers.get("retry-after"))
        current = current.__cause__ or current.__context__
    return None


def _seconds(value: str | None) -> float:
    if not value:
        return 1.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return 1.0
