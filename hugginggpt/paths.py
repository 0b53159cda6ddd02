"""Paths as people and models write them: ``~`` and ``~user`` expanded where that names a home.

``Path.expanduser`` raises ``RuntimeError`` for ``~name`` when no user ``name`` exists (and for ``~``
without a home), so any text from a model, a request or a command line that starts with ``~`` could
crash whoever expands it. Here such a path stays as written: it then names a file that does not
exist, and the caller's own "not found" answer applies.
"""

from __future__ import annotations

import os
from pathlib import Path


def expand_home(path: str | os.PathLike[str]) -> Path:
    """``path`` with a leading ``~`` / ``~user`` expanded; unchanged when that home cannot be determined."""
    given = Path(path)
    try:
        return given.expanduser()
    except RuntimeError:  # "Could not determine home directory."
        return given
