"""Atomic file writes: a temporary file in the target folder, renamed into place when complete.

Readers (and a cancelled run) never see half a file: either the whole file exists or none does.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def atomic_write(path: str | Path, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write`` with a binary file handle and move the result to ``path`` only if it succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".partial-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
