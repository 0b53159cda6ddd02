"""GlobalPlanAgent: HuggingGPT's four stages (plan, select models, execute, respond) as a Runnable.

The whole plan is made up front by one LLM call, then run as a task graph; this is what lets
independent tasks run in parallel and keeps the LLM calls per request constant (2-3), unlike a
ReAct loop. The async path is the real implementation; sync calls run it on a private event loop.
Every run writes ``<workspace>/trace.json``, also when it fails or is cancelled.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import os
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    patch_config,
)
from langchain_core.tools import BaseTool

from hugginggpt.agent import events as ev
from hugginggpt.agent.plan import Plan, TaskInfo, describe_tools
from hugginggpt.agent.planning import (
    ConstrainedCache,
    PlanResult,
    Structured,
    aplan_request,
)
from hugginggpt.agent.request import AgentRequest
from hugginggpt.agent.response import arespond, known_files, response_messages
from hugginggpt.agent.scheduler import Scheduler
from hugginggpt.agent.selection import ModelSelector
from hugginggpt.agent.trace import Trace, UsageCounter

AgentInput = dict[str, Any] | str


class GlobalPlanAgent(Runnable[AgentInput, dict[str, Any]]):
    """HuggingGPT as a LangChain Runnable; see docs/ARCHITECTURE.md "Agent contract" for the output.

    ``tools``: any LangChain tools (default: one per task of the task table); ``catalog``: where
    model candidates come from (default: the shipped catalog when the default tools are used).
    ``workspace_root``: each run gets its own folder under it (default: ``$HUGGINGGPT_HOME``).
    ``execute=False`` stops after model selection (plan-only comparisons).
    """

    name = "GlobalPlanAgent"

    def __init__(self, llm: BaseChatModel, tools: Sequence[BaseTool] | None = None, catalog: Any = None, *,
                 top_k: int = 5, max_concurrency: int = 4, task_timeout: float = 300, history_tokens: int = 2000,
                 workspace_root: str | Path | None = None, structured: Structured = "auto", execute: bool = True):
        self.llm = llm
        self._tools = list(tools) if tools is not None else None
        self._catalog = catalog
        self.top_k = top_k
        self.max_concurrency = max_concurrency
        self.task_timeout = task_timeout
        self.history_tokens = history_tokens
        self.workspace_root = Path(workspace_root) if workspace_root is not None else None
        self.structured = structured
        self.execute = execute
        self._task_infos: dict[str, TaskInfo] | None = None
        self._constrained = ConstrainedCache(llm, structured)

    # ------------------------------------------------------------ configuration

    @property
    def catalog(self) -> Any:
        if self._catalog is None and self._tools is None:
            from hugginggpt.tools.catalog import ModelCatalog

            self._catalog = ModelCatalog()
        return self._catalog

    @property
    def tools(self) -> list[BaseTool]:
        if self._tools is None:
            from hugginggpt.tools.factory import build_tools

            self._tools = list(build_tools(catalog=self.catalog))
        return self._tools

    @property
    def task_infos(self) -> dict[str, TaskInfo]:
        if self._task_infos is None:
            from hugginggpt.tools.table import task_table

            self._task_infos = describe_tools(self.tools, task_table())
        return self._task_infos

    @property
    def constrained(self) -> ConstrainedCache:
        """The controller constrained to each schema (plan, selections), built once per LLM and mode."""
        if not self._constrained.serves(self.llm, self.structured):  # the LLM or mode was changed
            self._constrained = ConstrainedCache(self.llm, self.structured)
        return self._constrained

    # ------------------------------------------------------------ planning only

    async def aplan(self, input: str, chat_history: list[Any] | None = None, *, files: list[str] | None = None,
                    config: RunnableConfig | None = None) -> PlanResult:
        """Stage 1 alone: the validated plan, its repairs, the raw LLM answers and token usage."""
        return await aplan_request(self.llm, self.task_infos, input, chat_history=chat_history, files=files,
                                   history_tokens=self.history_tokens, structured=self.structured, config=config,
                                   constrained=self.constrained)

    def plan(self, input: str, chat_history: list[Any] | None = None, *, files: list[str] | None = None,
             config: RunnableConfig | None = None) -> PlanResult:
        return _run_sync(self.aplan(input, chat_history, files=files, config=config))

    # ------------------------------------------------------------ Runnable

    def invoke(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:
        return _run_sync(self.ainvoke(input, config, **kwargs))

    async def ainvoke(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:
        """The run without a consumer in between: events still go to the trace, nothing is queued."""
        return await self._run(AgentRequest.parse(input), ensure_config(config), None)

    def stream(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Stage events as they happen, then ``{"event": "final", "output": ...}``."""
        yield from _iterate_sync(self.astream(input, config, **kwargs))

    async def astream(self, input: AgentInput, config: RunnableConfig | None = None,
                      **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Stage events as they happen, then ``final``; stopping the iteration cancels the run.

        The run is a task that pushes events to a queue and, when it ends for any reason, a sentinel,
        so each event costs one queue hand-off (no per-event task or ``asyncio.wait``).
        """
        events: asyncio.Queue[Any] = asyncio.Queue()
        runner = asyncio.create_task(self._run(AgentRequest.parse(input), ensure_config(config), events))
        runner.add_done_callback(lambda _: events.put_nowait(ev.END))
        try:
            while (event := await events.get()) is not ev.END:
                yield event
            runner.result()  # the run failed: raise its error here
        finally:
            if not runner.done():  # the consumer stopped early: cancel the run
                runner.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await runner
            elif not runner.cancelled():
                runner.exception()  # retrieved, so an abandoned failure is not logged as unhandled

    # ------------------------------------------------------------ the run

    async def _run(self, request: AgentRequest, config: RunnableConfig,
                   events: asyncio.Queue | None) -> dict[str, Any]:
        """One request; stage events go to the trace and, when streaming, to ``events``."""
        usage = UsageCounter()
        manager = get_async_callback_manager_for_config(config)
        manager.add_handler(usage, inherit=True)
        run_manager = await manager.on_chain_start(None, request, name=config.get("run_name") or self.get_name(),
                                                   run_id=config.get("run_id"))
        try:
            workspace = request.new_workspace(self.workspace_root)
        except BaseException as exc:  # e.g. an input file that does not exist: no folder for a trace
            await run_manager.on_chain_error(exc)
            raise
        trace = Trace(Path(workspace.root) / "trace.json", agent=self.get_name(), input=request.input,
                      chat_history=request.chat_history, files=request.files)
        sink = ev.EventSink(trace, events)

        def child(tag: str) -> RunnableConfig:
            return patch_config(config, callbacks=run_manager.get_child(tag))

        output: dict[str, Any] | None = None
        try:
            output = await self._stages(request, workspace, trace, sink, child)
            output["trace"] = str(trace.path)
        except BaseException as exc:
            trace.set("error", f"{type(exc).__name__}: {exc}")
            await run_manager.on_chain_error(exc)
            raise
        finally:
            trace.set("usage", usage.as_dict())
            trace.write()
        await run_manager.on_chain_end(output)
        sink(ev.FINAL, output=output)
        return output

    async def _stages(self, request: AgentRequest, workspace: Any, trace: Trace, sink: ev.EventSink,
                      child: Any) -> dict[str, Any]:
        tasks = self.task_infos
        started = time.perf_counter()
        planned = await aplan_request(self.llm, tasks, request.input, chat_history=request.chat_history,
                                      files=request.files, history_tokens=self.history_tokens,
                                      structured=self.structured, config=child("plan"), trace=trace,
                                      constrained=self.constrained)
        trace.timing("plan", time.perf_counter() - started)
        plan = planned.plan
        trace.set("plan", plan.as_list())
        trace.set("repairs", planned.repairs)
        trace.set("raw_plan_outputs", planned.raw_outputs)
        sink(ev.PLAN, plan=plan.as_list(), repairs=planned.repairs)

        started = time.perf_counter()
        selector = ModelSelector(self.llm, self.catalog if plan.tasks else None, top_k=self.top_k,
                                 structured=self.structured, trace=trace, constrained=self.constrained,
                                 runnable=self._tool_can_run)
        selections = await selector.select(request.input, plan, tasks, child("selection"))
        trace.timing("selection", time.perf_counter() - started)
        trace.set("selections", selections)
        sink(ev.SELECTION, selections=selections)

        output: dict[str, Any] = {"output": "", "plan": plan.as_list(), "selections": selections, "results": {}}
        if not self.execute:
            return output

        outcomes = await self._execute(plan, selections, workspace, trace, sink, child("execute"))
        output["results"] = outcomes

        started = time.perf_counter()
        messages = response_messages(request.input, plan, selections, outcomes,
                                     chat_history=request.chat_history, history_tokens=self.history_tokens)
        files = known_files(outcomes, request.files)
        answer, invented = await arespond(self.llm, messages, files, child("response"), trace, outcomes=outcomes)
        trace.timing("response", time.perf_counter() - started)
        trace.set("invented_paths", invented)
        sink(ev.RESPONSE, output=answer, invented_paths=invented)
        output["output"] = answer
        return output

    def _tool_can_run(self, task: str, model: str) -> bool:
        """Whether the tool of ``task`` can run ``model`` (tools without ``can_run`` accept any)."""
        tool = next((t for t in self.tools if t.name == task), None)
        can_run = getattr(tool, "can_run", None)
        return True if can_run is None else bool(can_run(model))

    async def _execute(self, plan: Plan, selections: dict[int, dict[str, Any]], workspace: Any, trace: Trace,
                       sink: ev.EventSink, config: RunnableConfig) -> dict[int, dict[str, Any]]:
        started = time.perf_counter()
        scheduler = Scheduler(plan, {t.name: t for t in self.tools}, self.task_infos, selections=selections,
                              workspace=workspace, max_concurrency=self.max_concurrency,
                              task_timeout=self.task_timeout, emit=sink)
        try:
            return await scheduler.run(config)
        finally:
            trace.timing("execution", time.perf_counter() - started)
            trace.set("results", scheduler.outcomes)


# ---------------------------------------------------------------- sync bridges
#
# Sync calls run the async implementation on one private event loop in a daemon thread, shared by
# the whole process. ``asyncio.run`` per call cost ~2 ms (a new loop and thread pool each time) and
# cannot be used where a loop is already running (Jupyter); a shared loop has neither problem. The
# caller's context variables travel with the coroutine. Only a call made on that loop's own thread
# (a sync call nested inside a run) gets a fresh loop in a new thread, since waiting would deadlock.


class _LoopThread:
    """The private event loop, started on first use (and again in a forked child)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = 0

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid() or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="hugginggpt-loop", daemon=True)
                self._thread.start()
                self._loop, self._pid = loop, os.getpid()
            return self._loop

    def is_current(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, Any]) -> tuple[concurrent.futures.Future, Callable[[], None]]:
        """Start ``coro`` as a task on the loop, in the caller's context; returns its outcome and a canceller."""
        loop, context = self.loop(), contextvars.copy_context()
        outcome: concurrent.futures.Future = concurrent.futures.Future()
        started: list[asyncio.Task] = []

        def start() -> None:  # runs on the loop, inside ``context``
            if not outcome.set_running_or_notify_cancel():
                coro.close()
                return
            task = loop.create_task(coro)
            started.append(task)
            task.add_done_callback(lambda done: _settle(done, outcome))

        def cancel() -> None:
            loop.call_soon_threadsafe(lambda: started[0].cancel() if started else outcome.cancel())

        loop.call_soon_threadsafe(start, context=context)
        return outcome, cancel


def _settle(task: asyncio.Task, outcome: concurrent.futures.Future) -> None:
    if task.cancelled():
        outcome.set_exception(asyncio.CancelledError())
    elif task.exception() is not None:
        outcome.set_exception(task.exception())
    else:
        outcome.set_result(task.result())


_LOOP = _LoopThread()


def _wait(outcome: concurrent.futures.Future, cancel: Callable[[], None]) -> Any:
    """The outcome; on Ctrl-C in the caller, the run is cancelled (its trace written) first."""
    try:
        return outcome.result()
    except BaseException:
        if not outcome.done():
            cancel()
            with contextlib.suppress(BaseException):
                outcome.result()
        raise


def _run_sync(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to completion from sync code, also when the caller is inside an event loop."""
    if _LOOP.is_current():
        return _run_in_new_thread(coro)
    return _wait(*_LOOP.submit(coro))


def _run_in_new_thread(coro: Coroutine[Any, Any, Any]) -> Any:
    result: list[Any] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(coro))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            error.append(exc)

    thread = threading.Thread(target=target, name="hugginggpt-agent")
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


_DONE = object()


def _iterate_sync(agen: AsyncIterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Iterate an async generator from sync code; stopping early (or Ctrl-C) cancels it."""
    items: queue.SimpleQueue[Any] = queue.SimpleQueue()

    async def pump() -> None:
        try:
            async for item in agen:
                items.put(item)
        except BaseException as exc:  # handed to the consumer
            items.put(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            items.put(_DONE)

    if _LOOP.is_current():  # nested inside a run: pump on a loop of its own
        yield from _run_in_new_thread_iter(pump, items)
        return
    outcome, cancel = _LOOP.submit(pump())
    finished = False
    try:
        while (item := items.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item
        finished = True
    finally:
        if not finished:
            cancel()
        with contextlib.suppress(BaseException):
            outcome.result()  # the generator has closed (trace written) before we return


def _run_in_new_thread_iter(pump: Callable[[], Coroutine[Any, Any, None]],
                            items: queue.SimpleQueue[Any]) -> Iterator[dict[str, Any]]:
    thread = threading.Thread(target=lambda: asyncio.run(pump()), name="hugginggpt-stream", daemon=True)
    thread.start()
    try:
        while (item := items.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        thread.join()
