"""Stage 3, execution: an event-driven asyncio scheduler over the plan's task graph.

Each task waits on its dependencies' futures (no polling, unlike HuggingGPT's 0.5 s loop) and
starts the moment they resolve; independent tasks run in parallel up to ``max_concurrency``, each
under ``task_timeout`` through the agents' one tool-call policy (``tool_call.invoke_tool``). ``<resource>-N`` anywhere in an argument (several per string, inside lists)
is replaced by task N's output of the argument's kind. A failed task marks its dependants skipped,
with the reason; unrelated tasks still run. The design follows LLMCompiler's task fetching unit.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import patch_config
from langchain_core.tools import BaseTool

from hugginggpt.agent import events as ev
from hugginggpt.agent.plan import Plan, PlanTask
from hugginggpt.agent.tool_call import ToolCall, invoke_tool
from hugginggpt.errors import ResourceError
from hugginggpt.tools.resources.refs import RESOURCE_REF
from hugginggpt.tools.results import resource_value
from hugginggpt.tools.table import MEDIA_KINDS, TaskSpec

#: A task's outcome as ``results`` holds it: ``tool_call.Outcome.record()``, or ``status: "skipped"``.
Record = dict[str, Any]
Emit = Callable[..., Any]


def _reference_kind(kind: str) -> str:
    """The output kind a reference in an argument of ``kind`` stands for."""
    return kind if kind in MEDIA_KINDS else "text"


def _whole_output(result: dict[str, Any]) -> str:
    """What a whole-string reference of unknown kind stands for: the result's file, else its text."""
    found = next((result[k] for k in MEDIA_KINDS if isinstance(result.get(k), str)), None)
    return found if found is not None else resource_value(result, "text")


def substitute(value: Any, kind: str | None, results: dict[int, dict[str, Any]], task: str | None = None, *,
               missing: Literal["raise", "keep"] = "raise") -> Any:
    """``value`` with every ``<resource>-N`` replaced by task N's output: the one substitution.

    ``kind`` is the argument's kind: a string that is exactly one reference becomes that output
    (a file path for media, else text); references inside longer text become text; lists and dicts
    are walked. ``kind=None`` (a tool call whose argument kinds are unknown): a whole reference is
    N's file if it made one, else its text. A reference to a task without a result (or without that
    output) raises ``ResourceError`` naming it, or with ``missing="keep"`` stays for the tool to reject.
    """
    if isinstance(value, list):
        return [substitute(v, kind, results, task, missing=missing) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, kind, results, task, missing=missing) for k, v in value.items()}
    if not isinstance(value, str) or not RESOURCE_REF.search(value):
        return value

    def output_of(match: Any, whole: bool) -> str:
        ref = int(match.group("id"))
        try:
            if ref not in results:
                raise ResourceError(task, f"<resource>-{ref} has no result")
            try:
                if kind is None and whole:
                    return _whole_output(results[ref])
                return resource_value(results[ref], _reference_kind(kind or "text"))
            except ResourceError as exc:
                raise ResourceError(task, f"<resource>-{ref}: {exc.cause}") from None
        except ResourceError:
            if missing == "keep":
                return match.group(0)
            raise

    whole = RESOURCE_REF.fullmatch(value.strip())
    if whole:
        return output_of(whole, True)
    return RESOURCE_REF.sub(lambda m: output_of(m, False), value)


class Scheduler:
    """Runs one plan's tasks as soon as their inputs exist; collects one outcome per task."""

    def __init__(self, plan: Plan, tools: dict[str, BaseTool], tasks: dict[str, TaskSpec], *,
                 selections: dict[int, dict[str, Any]] | None = None, workspace: Any = None,
                 max_concurrency: int = 4, task_timeout: float = 300, emit: Emit | None = None):
        self.plan = plan
        self.tools = tools
        self.tasks = tasks
        self.selections = selections or {}
        self.workspace = workspace
        self.semaphore = asyncio.Semaphore(max(1, max_concurrency))
        self.task_timeout = task_timeout
        self._emit = emit or (lambda *args, **kwargs: None)
        self.outcomes: dict[int, Record] = {}
        self.results: dict[int, dict[str, Any]] = {}

    async def run(self, config: RunnableConfig | None = None) -> dict[int, Record]:
        """Run every task; returns ``{id: outcome}`` in plan order. Cancels cleanly as a whole."""
        done: dict[int, asyncio.Future[str]] = {t.id: asyncio.get_running_loop().create_future()
                                                for t in self.plan.tasks}
        runners = [asyncio.create_task(self._run_one(t, done, config), name=f"task-{t.id}")
                   for t in self.plan.tasks]
        try:
            await asyncio.gather(*runners)
        finally:
            for runner in runners:
                runner.cancel()
        return {t.id: self.outcomes[t.id] for t in self.plan.tasks}

    async def _run_one(self, step: PlanTask, done: dict[int, asyncio.Future[str]],
                       config: RunnableConfig | None) -> None:
        try:
            for dep in step.dep:
                status = await asyncio.shield(done[dep])
                if status != "ok":
                    reason = f"skipped: task {dep} ({self.plan.by_id[dep].task}) {status}"
                    self._skip(step, reason)
                    await self.emit(ev.TASK_SKIPPED, id=step.id, task=step.task, reason=reason)
                    return
            async with self.semaphore:
                await self._execute(step, config)
        finally:
            if not done[step.id].done():
                done[step.id].set_result(self.outcomes.get(step.id, {}).get("status", "failed"))

    async def _execute(self, step: PlanTask, config: RunnableConfig | None) -> None:
        model = self.selections.get(step.id, {}).get("model")
        tool_config = patch_config(config, run_name=f"{step.task} #{step.id}",
                                   configurable={"hf_model": model, "workspace": self.workspace})
        call = ToolCall(step.id, step.task, invoke=lambda args: self.tools[step.task].ainvoke(args, tool_config),
                        args=lambda: self._arguments(step), dep=list(step.dep), model=model)
        outcome = await invoke_tool(self, call, self.task_timeout)
        if outcome.status == "ok":
            self.results[step.id] = outcome.result
        self.outcomes[step.id] = outcome.record()

    def _arguments(self, step: PlanTask) -> dict[str, Any]:
        info = self.tasks.get(step.task)
        args = {}
        for name, value in step.args.items():
            arg = info.find_arg(name) if info else None
            args[name] = substitute(value, arg.kind if arg else "text", self.results, step.task)
        return args

    async def emit(self, name: str, **fields: Any) -> None:
        """Hand a stage event to ``emit`` (a function or a coroutine function)."""
        sent = self._emit(name, **fields)
        if inspect.isawaitable(sent):
            await sent

    def _skip(self, step: PlanTask, reason: str) -> None:
        self.outcomes[step.id] = {"task": step.task, "status": "skipped", "result": None, "error": reason}
