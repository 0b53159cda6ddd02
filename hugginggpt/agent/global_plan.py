"""GlobalPlanAgent: HuggingGPT's four stages (plan, select models, execute, respond) as a Runnable.

The whole plan is made up front by one LLM call, then run as a task graph; this is what lets
independent tasks run in parallel and keeps the LLM calls per request constant (2-3), unlike a
ReAct loop. The async path is the real implementation; sync calls run it on a private event loop.
Every run writes ``<workspace>/trace.json``, also when it fails or is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, get_async_callback_manager_for_config, patch_config
from langchain_core.tools import BaseTool

from hugginggpt.agent import events as ev
from hugginggpt.agent.plan import Plan, TaskInfo, describe_tools
from hugginggpt.agent.planning import PlanResult, Structured, aplan_request
from hugginggpt.agent.response import arespond, known_files, response_messages
from hugginggpt.agent.scheduler import Scheduler
from hugginggpt.agent.selection import ModelSelector
from hugginggpt.agent.trace import Trace, UsageCounter
from hugginggpt.errors import HuggingGPTError

AgentInput = dict[str, Any] | str


def normalise_input(value: AgentInput) -> dict[str, Any]:
    """``{"input", "chat_history", "files"}`` from a plain string or a dict."""
    if isinstance(value, str):
        return {"input": value, "chat_history": [], "files": []}
    if not isinstance(value, dict) or not isinstance(value.get("input"), str):
        raise HuggingGPTError("the agent's input must be a string or a dict with an 'input' string")
    return {"input": value["input"], "chat_history": list(value.get("chat_history") or []),
            "files": [str(f) for f in value.get("files") or []]}


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

    def _workspace(self, files: list[str]) -> Any:
        from hugginggpt.tools.resources import Workspace, new_run_id

        root = self.workspace_root / new_run_id() if self.workspace_root is not None else None
        return Workspace(root, inputs=files)

    # ------------------------------------------------------------ planning only

    async def aplan(self, input: str, chat_history: list[Any] | None = None, *, files: list[str] | None = None,
                    config: RunnableConfig | None = None) -> PlanResult:
        """Stage 1 alone: the validated plan, its repairs, the raw LLM answers and token usage."""
        return await aplan_request(self.llm, self.task_infos, input, chat_history=chat_history, files=files,
                                   history_tokens=self.history_tokens, structured=self.structured, config=config)

    def plan(self, input: str, chat_history: list[Any] | None = None, *, files: list[str] | None = None,
             config: RunnableConfig | None = None) -> PlanResult:
        return _run_sync(self.aplan(input, chat_history, files=files, config=config))

    # ------------------------------------------------------------ Runnable

    def invoke(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:
        return _run_sync(self.ainvoke(input, config, **kwargs))

    async def ainvoke(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:
        async for event in self.astream(input, config, **kwargs):
            if event["event"] == ev.FINAL:
                return event["output"]
        raise HuggingGPTError("the run ended without a final output")  # pragma: no cover - _run always ends so

    def stream(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Stage events as they happen, then ``{"event": "final", "output": ...}``."""
        yield from _iterate_sync(self.astream(input, config, **kwargs))

    async def astream(self, input: AgentInput, config: RunnableConfig | None = None,
                      **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        runner = asyncio.create_task(self._run(normalise_input(input), ensure_config(config), events))
        finished = False
        try:
            while True:
                getter = asyncio.ensure_future(events.get())
                await asyncio.wait({getter, runner}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    while not events.empty():
                        yield events.get_nowait()
                    runner.result()  # the run failed: raise its error
                    return
                event = getter.result()
                yield event
                if event["event"] == ev.FINAL:
                    finished = True
                    await runner
                    return
        finally:
            if not finished and not runner.done():  # the consumer stopped early: cancel the run
                runner.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await runner

    # ------------------------------------------------------------ the run

    async def _run(self, request: dict[str, Any], config: RunnableConfig, events: asyncio.Queue) -> None:
        usage = UsageCounter()
        manager = get_async_callback_manager_for_config(config)
        manager.add_handler(usage, inherit=True)
        run_manager = await manager.on_chain_start(None, request, name=config.get("run_name") or self.get_name(),
                                                   run_id=config.get("run_id"))
        try:
            workspace = self._workspace(request["files"])
        except BaseException as exc:  # e.g. an input file that does not exist: no folder for a trace
            await run_manager.on_chain_error(exc)
            raise
        trace = Trace(Path(workspace.root) / "trace.json", agent=self.get_name(), input=request["input"],
                      chat_history=request["chat_history"], files=request["files"])
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

    async def _stages(self, request: dict[str, Any], workspace: Any, trace: Trace, sink: ev.EventSink,
                      child: Any) -> dict[str, Any]:
        tasks = self.task_infos
        started = time.perf_counter()
        planned = await aplan_request(self.llm, tasks, request["input"], chat_history=request["chat_history"],
                                      files=request["files"], history_tokens=self.history_tokens,
                                      structured=self.structured, config=child("plan"), trace=trace)
        trace.timing("plan", time.perf_counter() - started)
        plan = planned.plan
        trace.set("plan", plan.as_list())
        trace.set("repairs", planned.repairs)
        trace.set("raw_plan_outputs", planned.raw_outputs)
        sink(ev.PLAN, plan=plan.as_list(), repairs=planned.repairs)

        started = time.perf_counter()
        selector = ModelSelector(self.llm, self.catalog if plan.tasks else None, top_k=self.top_k,
                                 structured=self.structured, trace=trace)
        selections = await selector.select(request["input"], plan, tasks, child("selection"))
        trace.timing("selection", time.perf_counter() - started)
        trace.set("selections", selections)
        sink(ev.SELECTION, selections=selections)

        output: dict[str, Any] = {"output": "", "plan": plan.as_list(), "selections": selections, "results": {}}
        if not self.execute:
            return output

        outcomes = await self._execute(plan, selections, workspace, trace, sink, child("execute"))
        output["results"] = outcomes

        started = time.perf_counter()
        messages = response_messages(request["input"], plan, selections, outcomes,
                                     chat_history=request["chat_history"], history_tokens=self.history_tokens)
        files = known_files(outcomes, request["files"])
        answer, invented = await arespond(self.llm, messages, files, child("response"), trace)
        trace.timing("response", time.perf_counter() - started)
        trace.set("invented_paths", invented)
        sink(ev.RESPONSE, output=answer, invented_paths=invented)
        output["output"] = answer
        return output

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


def _run_sync(coro: Any) -> Any:
    """Run a coroutine to completion from sync code, also when the caller is inside an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
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
    """Iterate an async generator from sync code on a private loop in a thread; stop it if abandoned."""
    items: queue.Queue[Any] = queue.Queue()
    loop = asyncio.new_event_loop()
    holder: dict[str, asyncio.Task] = {}

    async def pump() -> None:
        try:
            async for item in agen:
                items.put(item)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            items.put(exc)
        finally:
            items.put(_DONE)

    def target() -> None:
        asyncio.set_event_loop(loop)
        holder["task"] = loop.create_task(pump())
        loop.run_until_complete(holder["task"])
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    thread = threading.Thread(target=target, name="hugginggpt-stream", daemon=True)
    thread.start()
    try:
        while (item := items.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        if thread.is_alive() and "task" in holder:
            loop.call_soon_threadsafe(holder["task"].cancel)
        thread.join()
