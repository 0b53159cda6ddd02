"""The ``table`` argument of tabular tasks as columns: the one reader, for local and remote executors.

A table is either a mapping of column names to cells (what an LLM writes inline) or a CSV file. A file
name is a path like any media argument: it must pass ``Workspace.resolve`` (the user's inputs, the
run's workspace, or an http(s) download), so a table cannot be read from anywhere else and sent on.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugginggpt.errors import ResourceError

if TYPE_CHECKING:
    from hugginggpt.tools.resources.workspace import Workspace

#: The largest CSV file read as a table (a table argument is data for one model call, not a database).
MAX_TABLE_BYTES = 20 << 20


def read_table(value: Any, workspace: "Workspace", task: str | None = None) -> dict[str, list[Any]]:
    """``value`` as ``{column: [cells]}``: a mapping (cells as given; a single cell becomes a one-cell
    column) or a CSV file the workspace allows (cells as strings, blanks as ``""``).

    ``ResourceError`` (naming ``task``) for a path outside the allowed folders, a missing, unreadable,
    oversized or empty file, and for anything that is neither a mapping nor a path.
    """
    if isinstance(value, Mapping):
        if not value:
            raise ResourceError(task, "table is empty: it must map column names to lists of cells")
        return {str(k): list(cells) if isinstance(cells, (list, tuple)) else [cells] for k, cells in value.items()}
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise ResourceError(task, "table must map column names to lists of cells, or be a CSV file path")
    try:
        path = workspace.resolve(value, "table")
    except ResourceError as exc:
        raise ResourceError(task, f"table: {exc.cause}") from None
    return read_csv(path, task)


def read_csv(path: str | Path, task: str | None = None) -> dict[str, list[str]]:
    """The columns of a CSV file already checked by the workspace (UTF-8, a header row first)."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_TABLE_BYTES:
            raise ResourceError(task, f"the table {path.name} is larger than {MAX_TABLE_BYTES >> 20} MiB")
        text = path.read_text(encoding="utf-8-sig")
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ResourceError(task, f"cannot read table {path.name}: {getattr(exc, 'strerror', None) or exc}") from None
    if not rows:
        raise ResourceError(task, f"the table {path.name} has no rows")
    return {str(column): [row.get(column) or "" for row in rows] for column in rows[0] if column is not None}
