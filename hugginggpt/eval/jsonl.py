"""Reading JSONL files line by line, keeping line numbers so errors can point at the bad line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The non-blank lines of a text file with their 1-based line numbers."""
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if line.strip():
                yield line_no, line
