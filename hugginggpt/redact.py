"""Secrets (API keys, tokens, bearer credentials) out of text before it is shown or written.

The bottom layer, beside ``errors.py``: the LLM specs, the model pull, error lines and the trace
all redact through here, and it imports nothing of the package.
"""

from __future__ import annotations

import functools
import re

_SECRET_PATTERNS = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),  # OpenAI-style keys
    re.compile(r"\bhf_[A-Za-z0-9]{8,}"),  # Hugging Face tokens
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"),
]
_SECRET_KEYS = re.compile(r"(?i)(api[_-]?key|token|secret|password|authorization)")


def redact(text: str) -> str:
    """``text`` with secrets (API keys, tokens, bearer credentials) replaced by ``***``."""
    # Every secret pattern contains one of these verbatim (``bearer`` in any case): substring tests
    # are several times faster than a regular expression, and most text has none.
    if not ("sk-" in text or "hf_" in text or "bearer" in text.lower()):
        return text
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + "***", text)
    return text


@functools.lru_cache(maxsize=1024)
def is_secret_key(key: str) -> bool:
    """Whether a dict key names a secret (``api_key``, ``token``, ``Authorization``...); keys repeat
    from run to run, so each is asked once."""
    return bool(_SECRET_KEYS.search(key))
