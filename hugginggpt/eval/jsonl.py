"""JSONL files: read line by line with line numbers (so errors can point at the bad line), written whole
and atomically, and an unfinished last line (a run killed while writing) cut off before appending."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The non-blank lines of a text file with their 1-based line numbers."""
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if line.strip():
                yield line_no, line


def write_jsonl(path: Path, rows: Iterable[Any]) -> Path:
    """``rows`` as JSON lines in ``path``, replacing it only once every line is written."""
    from hugginggpt.tools.resources.atomic import atomic_write

    def write(fh: Any) -> None:
        for row in rows:
            fh.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))

    return atomic_write(path, write)


def cut_unfinished_line(path: Path) -> None:
    """Drop the last line of ``path`` when it does not end with a newline: the row being written when a
    run was killed, so the next run appends after whole rows only."""
    if not path.is_file():
        return
    with path.open("rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        chunk = 1 << 16
        end = size
        while end > 0:
            start = max(0, end - chunk)
            fh.seek(start)
            newline = fh.read(end - start).rfind(b"\n")
            if newline != -1:
                fh.truncate(start + newline + 1)
                return
            end = start
        fh.truncate(0)
