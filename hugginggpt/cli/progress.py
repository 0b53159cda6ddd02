"""Live progress of an agent run on stderr, fed by the agent's stage events (see ARCHITECTURE.md).

On a terminal a rich table of tasks updates in place; otherwise (pipes, logs, tests) each event is
one plain line, so a log still tells what happened and when.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from hugginggpt.agent import events as ev

_STATUS_STYLE = {"pending": "dim", "running": "yellow", "ok": "green", "failed": "red", "skipped": "magenta"}
_DETAIL_CHARS = 80
#: A task's status after each of its closing events.
_ENDED = {ev.TASK_END: "ok", ev.TASK_FAILED: "failed", ev.TASK_SKIPPED: "skipped"}


def _short(value: Any, limit: int = _DETAIL_CHARS) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class TaskRow:
    id: Any
    task: str
    status: str = "pending"
    model: str = ""
    seconds: float | None = None
    detail: str = ""


class StageProgress:
    """Consumes stage events (``update``) and shows them; use as a context manager around the run."""

    def __init__(self, console: Console | None = None, *, live: bool | None = None, enabled: bool = True):
        self.console = console or Console(stderr=True)
        self.enabled = enabled
        self.live = self.console.is_terminal if live is None else live
        self.stage = "planning"
        self.rows: dict[Any, TaskRow] = {}
        self._live: Live | None = None

    def __enter__(self) -> "StageProgress":
        if self.enabled and self.live:
            self._live = Live(self.render(), console=self.console, refresh_per_second=8, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.update(self.render())
            self._live.__exit__(*exc)
            self._live = None

    def update(self, event: dict[str, Any]) -> None:
        """Apply one stage event and show it."""
        self._apply(event)
        if not self.enabled:
            return
        if self._live is not None:
            self._live.update(self.render())
        else:
            line = describe(event)
            if line:
                self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def _row(self, event: dict[str, Any]) -> TaskRow:
        key = event.get("id")
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = TaskRow(id=key, task=str(event.get("task", "?")))
        if event.get("task"):
            row.task = str(event["task"])
        return row

    def _apply(self, event: dict[str, Any]) -> None:
        name = event.get("event")
        if name == ev.PLAN:
            self.stage = "selecting models"
            for node in event.get("plan") or []:
                self._row(node).detail = _short(str(node.get("step") or ""))
        elif name == ev.SELECTION:
            self.stage = "running tasks"
            for choice in selection_rows(event):
                self._row(choice).model = str(choice.get("model") or "")
        elif name == ev.TASK_START:
            self.stage = "running tasks"
            self._row(event).status = "running"
        elif name in _ENDED:
            row = self._row(event)
            row.status = _ENDED[name]
            row.seconds = event.get("seconds")
            row.detail = _short(_outcome(event))
        elif name == ev.RESPONSE:
            self.stage = "done"

    def _name_widths(self) -> tuple[int, int]:
        """The widths of the task and model columns: their longest names, unless that leaves the
        detail column less than ``_DETAIL_ROOM`` characters; then task and model names share what is
        left and are cut (ellipsis), so the detail wraps instead of shrinking to a column of "…"."""
        rows = self.rows.values()
        task = max((len(row.task) for row in rows), default=0) or len("task")
        model = max((len(row.model) for row in rows), default=0) or len("model")
        detail = min(_DETAIL_ROOM, max((len(row.detail) for row in rows), default=0))
        room = self.console.width - _FIXED_WIDTH - max(detail, len("detail"))
        if task + model <= room:
            return task, model
        task_share = max(8, room * task // (task + model))
        return task_share, max(8, room - task_share)

    def render(self) -> Group:
        table = Table(box=None, pad_edge=False, show_header=bool(self.rows))
        task_width, model_width = self._name_widths()
        table.add_column("id", no_wrap=True)
        table.add_column("task", overflow="ellipsis", no_wrap=True, max_width=task_width)
        table.add_column("model", overflow="ellipsis", no_wrap=True, max_width=model_width)
        table.add_column("status", no_wrap=True, min_width=len("running"))
        table.add_column("time", no_wrap=True, min_width=len("100.0s"))
        table.add_column("detail", overflow="fold", min_width=12)
        for row in self.rows.values():
            seconds = f"{row.seconds:.1f}s" if isinstance(row.seconds, (int, float)) else ""
            table.add_row(str(row.id), row.task, row.model, Text(row.status, style=_STATUS_STYLE.get(row.status, "")),
                          seconds, row.detail)
        return Group(Text(f"hugginggpt: {self.stage}", style="bold"), table)


#: The id, status and time columns (at most 3 + 7 + 6 characters) and the 2-space gaps of six columns.
_FIXED_WIDTH = 3 + 7 + 6 + 5 * 2
#: The width the detail column keeps on a narrow terminal (its text wraps within it).
_DETAIL_ROOM = 24


def _outcome(event: dict[str, Any]) -> str:
    if event.get("event") == ev.TASK_END:
        result = event.get("result")
        if isinstance(result, dict):
            return str(result.get("text") or result.get("image") or result.get("audio") or result.get("video")
                       or result.get("data") or "")
        return str(result or "")
    return str(event.get("error") or event.get("reason") or "")


def selection_rows(event: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``{"id", "task", "model"}`` per task: a ``selections`` mapping (all tasks at once) or a single choice."""
    selections = event.get("selections")
    if isinstance(selections, dict):
        return [{"id": key, **(value if isinstance(value, dict) else {"model": value})}
                for key, value in selections.items()]
    return [event] if event.get("model") is not None else []


def describe(event: dict[str, Any]) -> str | None:
    """One plain line for an event, or None for events not worth a line."""
    name = event.get("event")
    if name == ev.PLAN:
        plan = event.get("plan") or []
        steps = ", ".join(f"{node.get('id')}:{node.get('task')}" + (f" ({node['step']})" if node.get("step") else "")
                          for node in plan)
        return f"plan: {len(plan)} task(s) {steps}".rstrip()
    if name == ev.SELECTION:
        lines = [" ".join(filter(None, ["task", str(c.get("id")), c.get("task")])) + f": model {c.get('model')}"
                 for c in selection_rows(event)]
        return "\n".join(lines) or None
    if name == ev.TASK_START:
        return f"task {event.get('id')} {event.get('task')}: started"
    if name in _ENDED:
        status = _ENDED[name]
        seconds = event.get("seconds")
        took = f" ({seconds:.1f}s)" if isinstance(seconds, (int, float)) else ""
        outcome = _short(_outcome(event))
        return f"task {event.get('id')} {event.get('task')}: {status}{took}" + (f": {outcome}" if outcome else "")
    if name == ev.RESPONSE:
        return "response: ready"
    if name == ev.LLM_CUT_OFF:
        return f"note: {event.get('note') or 'an LLM answer was cut off'}"
    return None
