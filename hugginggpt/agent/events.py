"""Stage events of a global-plan run: what ``stream()`` yields and the trace records.

Every event is a plain dict ``{"event": name, "t": seconds since the run started, ...}``, so a
UI, a log, or a test reads them without importing anything from here.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hugginggpt.agent.trace import Trace

PLAN = "plan"
SELECTION = "selection"
TASK_START = "task_start"
TASK_END = "task_end"
TASK_FAILED = "task_failed"
TASK_SKIPPED = "task_skipped"
RESPONSE = "response"
FINAL = "final"

EVENT_NAMES = frozenset((PLAN, SELECTION, TASK_START, TASK_END, TASK_FAILED, TASK_SKIPPED, RESPONSE, FINAL))

END = object()  # queued after the last event of a run, however the run ended


class EventSink:
    """Records each event in the trace and, when someone streams the run, queues it for them.

    ``queue=None`` (``ainvoke``) only records: nobody would read the queue.
    """

    def __init__(self, trace: Trace, queue: asyncio.Queue | None = None):
        self.trace = trace
        self.queue = queue

    def __call__(self, name: str, **fields: Any) -> dict[str, Any]:
        if name not in EVENT_NAMES:
            raise ValueError(f"unknown stage event {name!r}")
        event = self.trace.event(name, **fields) if name != FINAL else {"event": FINAL, **fields}
        if self.queue is not None:
            self.queue.put_nowait(event)
        return event
