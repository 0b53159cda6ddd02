"""Stage 3, execution: an event-driven asyncio scheduler over the plan's task graph.

Each task waits on its dependencies' futures (no polling, unlike HuggingGPT's 0.5 s loop) and
starts the moment they resolve; independent tasks run in parallel up to ``max_concurrency``, each
under ``task_timeout``. ``<resource>-N`` anywhere in an argument (several per string, inside lists)
is replaced by task N's output of the argument's kind. A failed task marks its dependants skipped,
with the reason; unrelated tasks still run. The design follows LLMCompiler's task fetching unit.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import patch_config
from langchain_core.tools import BaseTool

from hugginggpt.agent.events import TASK_END, TASK_FAILED, TASK_SKIPPED, TASK_START
from hugginggpt.agent.plan import CANONICAL_REF, Plan, PlanTask, TaskInfo
from hugginggpt.errors import ResourceError, TaskError
from hugginggpt.tools.results import resource_value, summarize

Outcome = dict[str, Any]  # {"task", "status": "ok"|"failed"|"skipped", "result", "error"}
Emit = Callable[..., Any]


def _reference_kind(kind: str) -> str:
    """The output kind a reference in an argument of ``kind`` stands for."""
    return kind if kind in ("image", "audio", "video") else "text"


def substitute(value: Any, kind: str, results: dict[int, dict[str, Any]], task: str | None = None) -> Any:
    """``value`` with every ``<resource>-N`` replaced by task N's output of ``kind``.

    A string that is exactly one reference becomes the output itself; references inside longer
    text are replaced in place; lists and dicts are walked. ``ResourceError`` names what is missing.
    """
    if isinstance(value, list):
        return [substitute(v, kind, results, task) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, kind, results, task) for k, v in value.items()}
    if not isinstance(value, str) or not CANONICAL_REF.search(value):
        return value

    def output_of(match: Any) -> str:
        ref = int(match.group(1))
        if ref not in results:
            raise ResourceError(task, f"<resource>-{ref} has no result")
        try:
            return resource_value(results[ref], _reference_kind(kind))
        except ResourceError as exc:
            raise ResourceError(task, f"<resource>-{ref}: {exc.cause}") from None

    return CANONICAL_REF.sub(output_of, value)


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, TaskError):
        return str(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Scheduler:
    """Runs one plan's tasks as soon as their inputs exist; collects one outcome per task."""

    def __init__(self, plan: Plan, tools: dict[str, BaseTool], tasks: dict[str, TaskInfo], *,
                 selections: dict[int, dict[str, Any]] | None = None, workspace: Any = None,
                 max_concurrency: int = 4, task_timeout: float = 300, emit: Emit | None = None):
        self.plan = plan
        self.tools = tools
        self.tasks = tasks
        self.selections = selections or {}
        self.workspace = workspace
        self.semaphore = asyncio.Semaphore(max(1, max_concurrency))
        self.task_timeout = task_timeout
        self.emit = emit or (lambda *args, **kwargs: None)
        self.outcomes: dict[int, Outcome] = {}
        self.results: dict[int, dict[str, Any]] = {}

    async def run(self, config: RunnableConfig | None = None) -> dict[int, Outcome]:
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
                    self._finish(step, "skipped", error=reason)
                    self.emit(TASK_SKIPPED, id=step.id, task=step.task, reason=reason)
                    return
            async with self.semaphore:
                await self._execute(step, config)
        finally:
            if not done[step.id].done():
                done[step.id].set_result(self.outcomes.get(step.id, {}).get("status", "failed"))

    async def _execute(self, step: PlanTask, config: RunnableConfig | None) -> None:
        model = self.selections.get(step.id, {}).get("model")
        started = time.perf_counter()
        try:
            args = self._arguments(step)
            self.emit(TASK_START, id=step.id, task=step.task, args=args, model=model)
            tool_config = patch_config(config, run_name=f"{step.task} #{step.id}",
                                       configurable={"hf_model": model, "workspace": self.workspace})
            async with asyncio.timeout(self.task_timeout):  # no extra task per call, unlike wait_for
                result = await self.tools[step.task].ainvoke(args, tool_config)
        except TimeoutError:
            self._fail(step, f"{step.task}: timed out after {self.task_timeout:g} s", started)
            return
        except Exception as exc:  # noqa: BLE001 - one task's failure must not stop the others
            self._fail(step, _error_text(exc), started)
            return
        result = result if isinstance(result, dict) else {"text": str(result)}
        self.results[step.id] = result
        self._finish(step, "ok", result=result)
        self.emit(TASK_END, id=step.id, task=step.task, result=summarize(result),
                  seconds=round(time.perf_counter() - started, 6))

    def _arguments(self, step: PlanTask) -> dict[str, Any]:
        info = self.tasks.get(step.task)
        args = {}
        for name, value in step.args.items():
            arg = info.arg(name) if info else None
            args[name] = substitute(value, arg.kind if arg else "text", self.results, step.task)
        return args

    def _fail(self, step: PlanTask, error: str, started: float) -> None:
        self._finish(step, "failed", error=error)
        self.emit(TASK_FAILED, id=step.id, task=step.task, error=error,
                  seconds=round(time.perf_counter() - started, 6))

    def _finish(self, step: PlanTask, status: str, *, result: dict | None = None, error: str | None = None) -> None:
        self.outcomes[step.id] = {"task": step.task, "status": status, "result": result, "error": error}
