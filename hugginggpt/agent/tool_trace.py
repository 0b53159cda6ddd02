"""The tool calls of a tool-loop agent (function calling, ReAct) recorded as a plan.

These agents do not plan ahead, so their "plan" is reconstructed from what they did: one node per
tool call, and an edge from call A to call B when B's arguments carry a value A produced (a file
path, or A's text). Those values are recorded as ``<resource>-A``, so the plans of all three agents
are scored the same way (TaskBench-style).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugginggpt.agent.scheduler import substitute
from hugginggpt.agent.tool_call import as_envelope
from hugginggpt.tools.table import MEDIA_KINDS

#: Envelope keys whose string values a later call may consume.
PRODUCED_KINDS = (*MEDIA_KINDS, "text")
#: A produced text shorter than this only counts as used when an argument equals it exactly:
#: a short word ("cat") inside a longer argument is more likely coincidence than data flow.
MIN_TEXT_SUBSTRING = 12
#: Characters of an observation shown per step in a "what was done" summary.
SUMMARY_CHARS = 160


def observation_text(output: Any) -> str:
    """A tool's output as text: text as is, anything else as compact JSON."""
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, default=str)


def call_key(tool: str, args: dict[str, Any]) -> str:
    """Identity of a call: the same tool with the same arguments (key order ignored)."""
    return tool + json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


@dataclass
class ToolStep:
    """One tool call the agent made."""

    id: int
    task: str
    args: dict[str, Any]
    recorded_args: dict[str, Any]
    dep: list[int]
    status: str = "running"
    result: dict[str, Any] | None = None
    error: str | None = None
    observation: str = ""
    seconds: float | None = None
    started: float = field(default_factory=time.perf_counter)
    ended: Any = field(default=None, repr=False)
    """Resolved when the call ends, for a repeat of it that waits (set by the agent that runs it)."""

    def node(self) -> dict[str, Any]:
        return {"task": self.task, "id": self.id, "dep": list(self.dep), "args": self.recorded_args}

    def outcome(self) -> dict[str, Any]:
        status = "ok" if self.status == "ok" else "failed"
        return {"task": self.task, "status": status, "result": self.result, "error": self.error}


class ToolTrace:
    """Records tool calls as plan nodes with data-flow edges; thread-safe (parallel calls)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.steps: list[ToolStep] = []
        self._by_key: dict[str, ToolStep] = {}

    # -- recording -------------------------------------------------------------------------
    def start(self, task: str, args: dict[str, Any]) -> ToolStep:
        """Open a node for a call about to run; its edges point at the outputs its args reuse."""
        with self._lock:
            produced = self._produced_values()
            deps: set[int] = set()
            recorded = _substitute(args, produced, deps)
            step = ToolStep(id=len(self.steps), task=task, args=dict(args), recorded_args=recorded,
                            dep=sorted(deps))
            self.steps.append(step)
            self._by_key.setdefault(call_key(task, args), step)
        return step

    def finish(self, step: ToolStep, output: Any, observation: str | None = None) -> None:
        """Close a node with the tool's output; ``observation``: what the model was shown of it
        (default: the output as text), shown again when the model repeats the call."""
        with self._lock:
            step.status = "ok"
            step.result = as_envelope(output)
            step.observation = observation_text(output) if observation is None else observation
            step.seconds = round(time.perf_counter() - step.started, 6)

    def fail(self, step: ToolStep, error: str) -> None:
        """Close a node whose tool raised or rejected its arguments (the model is shown ``error: ...``)."""
        with self._lock:
            step.status = "failed"
            step.error = error
            step.observation = f"error: {error}"
            step.seconds = round(time.perf_counter() - step.started, 6)

    def resolve_references(self, args: dict[str, Any]) -> dict[str, Any]:
        """``args`` with ``<resource>-N`` (the tool descriptions offer it) replaced by call N's output.

        A whole-string reference becomes the call's file (or its text); one inside a longer text
        becomes the call's text. References to calls that produced nothing are left for the tool
        to reject.
        """
        with self._lock:
            outputs = {s.id: s.result for s in self.steps if s.status == "ok" and s.result}
        return substitute(args, None, outputs, missing="keep")

    def earlier_call(self, task: str, args: dict[str, Any]) -> ToolStep | None:
        """The first call with the same tool and arguments, if any (finished, or still running: a
        parallel call of the same turn)."""
        with self._lock:
            return self._by_key.get(call_key(task, args))

    # -- views -----------------------------------------------------------------------------
    @property
    def plan(self) -> list[dict[str, Any]]:
        with self._lock:
            return [s.node() for s in self.steps]

    @property
    def results(self) -> dict[int, dict[str, Any]]:
        with self._lock:
            return {s.id: s.outcome() for s in self.steps}

    def summary(self) -> str:
        """A few lines saying what was done, for a run stopped by a limit."""
        with self._lock:
            steps = list(self.steps)
        if not steps:
            return "No tool was called."
        lines = ["Done so far:"]
        for s in steps:
            text = s.observation if s.status == "ok" else f"failed: {s.error}"
            if len(text) > SUMMARY_CHARS:
                text = text[: SUMMARY_CHARS - 3] + "..."
            lines.append(f"{s.id}. {s.task} -> {text}")
        return "\n".join(lines)

    def _produced_values(self) -> list[tuple[str, int]]:
        """(value, step id) of every output a later call may reuse, longest first."""
        values: list[tuple[str, int]] = []
        for step in self.steps:
            if step.status != "ok" or not step.result:
                continue
            for kind in PRODUCED_KINDS:
                value = step.result.get(kind)
                if isinstance(value, str) and value.strip():
                    values.append((value, step.id))
        values.sort(key=lambda pair: len(pair[0]), reverse=True)
        return values


def _substitute(value: Any, produced: list[tuple[str, int]], deps: set[int]) -> Any:
    """``value`` with produced outputs replaced by ``<resource>-N`` (N collected into ``deps``)."""
    if isinstance(value, dict):
        return {k: _substitute(v, produced, deps) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, produced, deps) for v in value]
    if not isinstance(value, str):
        return value
    for produced_value, step_id in produced:
        ref = f"<resource>-{step_id}"
        if value.strip() == produced_value.strip() or _same_file(value, produced_value):
            deps.add(step_id)
            return ref
    for produced_value, step_id in produced:
        if _is_file_path(produced_value) or len(produced_value) >= MIN_TEXT_SUBSTRING:
            if produced_value in value:
                deps.add(step_id)
                value = value.replace(produced_value, f"<resource>-{step_id}")
    return value


def _is_file_path(value: str) -> bool:
    return Path(value).is_absolute() and bool(Path(value).suffix)


def _same_file(value: str, produced: str) -> bool:
    """A produced file named by its unique file name alone (LLMs often drop the folder)."""
    if not _is_file_path(produced) or "\n" in value:
        return False
    name = Path(produced).name
    return Path(value.strip()).name == name and produced.endswith(value.strip())
