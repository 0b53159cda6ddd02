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

EVENT_NAMES = (PLAN, SELECTION, TASK_START, TASK_END, TASK_FAILED, TASK_SKIPPED, RESPONSE, FINAL)


class EventSink:
    """Records each event in the trace and queues it for a streaming consumer."""

    def __init__(self, trace: Trace, queue: asyncio.Queue | None = None):
        self.trace = trace
        self.queue: asyncio.Queue[dict[str, Any]] = queue if queue is not None else asyncio.Queue()

    def __call__(self, name: str, **fields: Any) -> dict[str, Any]:
        if name not in EVENT_NAMES:
            raise ValueError(f"unknown stage event {name!r}")
        event = self.trace.event(name, **fields) if name != FINAL else {"event": FINAL, **fields}
        self.queue.put_nowait(event)
        return event
