"""What the tool-loop agents (function calling, ReAct) share: the calls they make recorded as a plan,
the run's limits, and repeated-call detection.

These agents do not plan ahead, so their "plan" is reconstructed from what they did: one node per
tool call, and an edge from call A to call B when B's arguments carry a value A produced (a file
path, or A's text). Those values are recorded as ``<resource>-A``, so the plans of all three agents
are scored the same way (TaskBench-style).
"""

from __future__ import annotations

import contextvars
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.tools import BaseTool
from pydantic import ValidationError

from hugginggpt.tools.resources import RESOURCE_REF

#: Envelope keys whose string values a later call may consume.
PRODUCED_KINDS = ("image", "audio", "video", "text")
#: A produced text shorter than this only counts as used when an argument equals it exactly:
#: a short word ("cat") inside a longer argument is more likely coincidence than data flow.
MIN_TEXT_SUBSTRING = 12
#: Characters of an observation shown per step in a "what was done" summary.
SUMMARY_CHARS = 160
#: Longest observation fed back to the LLM; the full result stays in ``results``.
MAX_OBSERVATION_CHARS = 4000

Emit = Callable[..., Any]
T = TypeVar("T")


def as_envelope(output: Any) -> dict[str, Any]:
    """A tool's output as a result envelope: dicts as they are, JSON objects parsed, text as ``text``."""
    if isinstance(output, dict):
        return output
    if isinstance(output, str):
        try:
            parsed = json.loads(output)
        except ValueError:
            return {"text": output}
        return parsed if isinstance(parsed, dict) else {"text": output}
    return {"data": output}


def observation_text(output: Any) -> str:
    """How a tool's output is shown to the LLM: text as is, anything else as compact JSON."""
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, default=str)


def clip_observation(text: str, limit: int = MAX_OBSERVATION_CHARS) -> str:
    """``text`` cut to ``limit`` characters with a note of the full length, so one huge tool output
    cannot flood the LLM's context."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} ... (truncated, {len(text)} characters)"


def message_text(message: Any) -> str:
    """The plain text of a chat message (content blocks joined)."""
    text = getattr(message, "text", None)
    if isinstance(text, str):
        return text
    content = getattr(message, "content", "")
    return content if isinstance(content, str) else str(content)


def describe_error(error: BaseException) -> str:
    """One line for an error: pydantic's field errors compacted, else the message (or the type)."""
    if isinstance(error, ValidationError):
        fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in error.errors())
        return f"invalid arguments: {fields}"
    return str(error) or type(error).__name__


def tool_error(tool: str, error: BaseException | str) -> str:
    """The error line of a failed call, naming the tool once."""
    text = error if isinstance(error, str) else describe_error(error)
    return text if text.startswith(f"{tool}:") else f"{tool}: {text}"


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

    def node(self) -> dict[str, Any]:
        return {"task": self.task, "id": self.id, "dep": list(self.dep), "args": self.recorded_args}

    def outcome(self) -> dict[str, Any]:
        status = "ok" if self.status == "ok" else "failed"
        return {"task": self.task, "status": status, "result": self.result, "error": self.error}


class ToolTrace:
    """Records tool calls as plan nodes with data-flow edges; thread-safe (parallel calls)."""

    def __init__(self, emit: Emit | None = None):
        self._emit = emit or (lambda *a, **k: None)
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
        self._emit("task_start", id=step.id, task=task, args=recorded, dep=step.dep)
        return step

    def finish(self, step: ToolStep, output: Any) -> None:
        """Close a node with the tool's output."""
        with self._lock:
            step.status = "ok"
            step.result = as_envelope(output)
            step.observation = observation_text(output)
            step.seconds = round(time.perf_counter() - step.started, 6)
        self._emit("task_end", id=step.id, task=step.task, result=step.result, seconds=step.seconds)

    def fail(self, step: ToolStep, error: str) -> None:
        """Close a node whose tool raised or rejected its arguments."""
        with self._lock:
            step.status = "failed"
            step.error = error
            step.observation = error
            step.seconds = round(time.perf_counter() - step.started, 6)
        self._emit("task_failed", id=step.id, task=step.task, error=error, seconds=step.seconds)

    def resolve_references(self, args: dict[str, Any]) -> dict[str, Any]:
        """``args`` with ``<resource>-N`` (the tool descriptions offer it) replaced by call N's output.

        A whole-string reference becomes the call's file (or its text); one inside a longer text
        becomes the call's text. References to calls that produced nothing are left for the tool
        to reject.
        """
        with self._lock:
            outputs = {s.id: s.result for s in self.steps if s.status == "ok" and s.result}
        return _resolve(args, outputs)

    def earlier_call(self, task: str, args: dict[str, Any]) -> ToolStep | None:
        """The first finished call with the same tool and arguments, if any."""
        with self._lock:
            step = self._by_key.get(call_key(task, args))
        return step if step is not None and step.status != "running" else None

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


def _resolve(value: Any, outputs: dict[int, dict[str, Any]]) -> Any:
    if isinstance(value, dict):
        return {k: _resolve(v, outputs) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, outputs) for v in value]
    if not isinstance(value, str) or not RESOURCE_REF.search(value):
        return value

    def output_of(match: re.Match, whole: bool) -> str:
        result = outputs.get(int(match.group("id") or match.group("id2")))
        kinds = PRODUCED_KINDS if whole else ("text",)
        found = next((result[k] for k in kinds if result and isinstance(result.get(k), str)), None)
        return found if found is not None else match.group(0)

    whole = RESOURCE_REF.fullmatch(value.strip())
    if whole:
        return output_of(whole, True)
    return RESOURCE_REF.sub(lambda m: output_of(m, False), value)


def _is_file_path(value: str) -> bool:
    return Path(value).is_absolute() and bool(Path(value).suffix)


def _same_file(value: str, produced: str) -> bool:
    """A produced file named by its unique file name alone (LLMs often drop the folder)."""
    if not _is_file_path(produced) or "\n" in value:
        return False
    name = Path(produced).name
    return Path(value.strip()).name == name and produced.endswith(value.strip())


# -- limits ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunLimits:
    """How much one run may do. ``max_repeats``: repeated identical calls tolerated before stopping."""

    max_steps: int = 10
    max_llm_calls: int = 12
    time_budget_s: float = 300
    max_repeats: int = 2

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_llm_calls", "time_budget_s", "max_repeats"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")


class Budget:
    """Counts a run's steps, LLM calls, repeats and time; the first limit hit becomes the stop reason."""

    def __init__(self, limits: RunLimits):
        self.limits = limits
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self.steps = 0
        self.llm_calls = 0
        self.repeats = 0
        self.stop_reason: str | None = None

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self._started

    @property
    def remaining_s(self) -> float:
        """Seconds left of the time budget (0 once spent): the deadline of a tool call."""
        return max(0.0, self.limits.time_budget_s - self.elapsed_s)

    def run_out_of_time(self) -> None:
        """Stop the run for its time budget (a tool call used up what was left)."""
        self.stop(f"ran out of the time budget of {self.limits.time_budget_s:g} s")

    def stop(self, reason: str) -> None:
        """Record why the run stops; the first reason wins."""
        with self._lock:
            self.stop_reason = self.stop_reason or reason

    def check_time(self) -> bool:
        """False (and stopped) once the wall-clock budget is spent."""
        if self.elapsed_s > self.limits.time_budget_s:
            self.run_out_of_time()
        return self.stop_reason is None

    def take_llm_call(self) -> bool:
        """Reserve one LLM call; False (and stopped) when none is left or time is up."""
        if not self.check_time():
            return False
        with self._lock:
            if self.llm_calls >= self.limits.max_llm_calls:
                self.stop_reason = self.stop_reason or (
                    f"reached the limit of {self.limits.max_llm_calls} LLM calls")
                return False
            self.llm_calls += 1
            return True

    def take_step(self) -> bool:
        """Reserve one step (a tool call, or a ReAct turn answered with an error observation)."""
        if not self.check_time():
            return False
        with self._lock:
            if self.steps >= self.limits.max_steps:
                self.stop_reason = self.stop_reason or f"reached the limit of {self.limits.max_steps} steps"
                return False
            self.steps += 1
            return True

    def note_repeat(self, task: str) -> bool:
        """Count a repeated identical call; False (and stopped) once repeats reach the threshold."""
        with self._lock:
            self.repeats += 1
            if self.repeats >= self.limits.max_repeats:
                self.stop_reason = self.stop_reason or (
                    f"repeated the same {task} call {self.repeats} times without progress")
                return False
            return True


def repeat_note(earlier: ToolStep) -> str:
    """The observation for a repeated call: the earlier one's, with a note not to ask again."""
    return (f"{earlier.observation}\n(Note: this is the same call as step {earlier.id}, "
            "so its earlier result is returned instead of running it again. "
            "Use it, call something else, or give the final answer.)")


class CallTimeout(TimeoutError):
    """A call did not finish within its deadline (raised by ``call_with_deadline``)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        super().__init__(f"timed out after {seconds:.1f} s (the run's time budget)")


def call_with_deadline(func: Callable[[], T], seconds: float) -> T:
    """``func()`` in a worker thread, waited for at most ``seconds`` (``CallTimeout`` after that).

    Python cannot stop a thread: a call that hangs is left behind in a daemon thread (which cannot
    hold the process open) and the caller moves on. The caller's context variables (LangChain's
    run config and callbacks) go with the call.
    """
    done = threading.Event()
    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome["value"] = context.run(func)
        except BaseException as error:  # re-raised in the caller's thread
            outcome["error"] = error
        finally:
            done.set()

    threading.Thread(target=work, name="tool-call", daemon=True).start()
    if not done.wait(max(seconds, 0.0)):
        raise CallTimeout(seconds)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def stopped_message(reason: str, tool_trace: ToolTrace, last_text: str = "") -> str:
    """The final answer of a run stopped by a limit: why, and what was done."""
    parts = [f"stopped: {reason}.", tool_trace.summary()]
    if last_text.strip():
        parts.append(f"Last model message: {last_text.strip()}")
    return "\n".join(parts)


def tool_args_help(tool: BaseTool) -> str:
    """One line per argument of a tool (from its args schema): name, type, required, description."""
    call_schema = tool.tool_call_schema  # the arguments the LLM fills (injected ones left out)
    schema = call_schema if isinstance(call_schema, dict) else call_schema.model_json_schema()
    required = set(schema.get("required", []))
    lines = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or "/".join(
            p.get("type", "?") for p in prop.get("anyOf", []) if p.get("type") != "null") or "any"
        flag = "required" if name in required else "optional"
        description = prop.get("description", "").strip()
        if prop.get("enum"):
            description = f"{description} One of: {', '.join(map(str, prop['enum']))}.".strip()
        lines.append(f"    - {name} ({kind}, {flag}){': ' + description if description else ''}")
    return "\n".join(lines)
