"""The one run lifecycle of the three agents: they provide only their steps (``Agent._steps``).

Everything else of a run lives here, once: parsing the input, the run folder and its trace, token
usage, the limits, the LangChain chain run (callbacks, ``run_id``, nested LLM and tool runs), stage
events, streaming, and cancellation. As in smolagents' ``MultiStepAgent._run_stream``, the base
drives the run and each agent's ``_steps`` yields what it produced.

The Runnable surface follows LangChain's convention:

- ``invoke`` / ``ainvoke`` / ``batch``: the contract's output dict (docs/ARCHITECTURE.md).
- ``stream`` / ``astream``: pieces of that output (``AddableDict``s); added up, they are ``invoke``'s
  output, so an agent composes in LCEL (``agent | (lambda o: o["output"])``).
- ``astream_events(version="v2")``: one chain run per invocation, the LLM and tool runs nested under
  it (``parent_ids``), and each stage event as an ``on_custom_event`` named after the stage.
- ``astream_stage_events`` / ``stream_stage_events``: the stage-event dicts themselves, ending
  with ``{"event": "final", "output": ...}`` — for progress displays (CLI, notebooks, server).

Stopping any of the iterators early cancels the run; its trace is still written.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    merge_configs,
    patch_config,
)
from langchain_core.runnables.utils import AddableDict
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from hugginggpt.agent.events import FINAL, LLM_CUT_OFF, RESPONSE, RESPONSE_DELTA, STAGE_EVENTS
from hugginggpt.agent.limits import Budget, RunLimits
from hugginggpt.agent.request import AgentRequest
from hugginggpt.agent.trace import Trace, UsageCounter
from hugginggpt.llm.content import CUT_OFF, REPETITION

if TYPE_CHECKING:
    from hugginggpt.agent.answer_check import Answer

AgentInput = dict[str, Any] | str
T = TypeVar("T")

#: The keys of the contract's output, in the order ``invoke`` returns them.
OUTPUT_KEYS = ("output", "plan", "selections", "results", "trace")
_DEFAULTS: dict[str, Any] = {"output": "", "plan": [], "selections": {}, "results": {}}

Listener = Callable[[dict[str, Any]], None]


class AgentRun:
    """What one run owns: request, workspace, trace, usage, budget, and its LangChain config."""

    def __init__(self, agent: str, request: AgentRequest, limits: RunLimits | None, *, workspace_root: str | Path | None,
                 config: RunnableConfig, run_manager: Any, usage: UsageCounter, listener: Listener | None = None):
        self.request = request
        self.workspace = request.new_workspace(workspace_root)
        self.usage = usage
        self.budget = Budget(limits or RunLimits())
        header = {"limits": asdict(limits)} if limits is not None else {}
        self.trace = Trace(Path(self.workspace.root) / "trace.json", agent=agent, input=request.input,
                           chat_history=request.chat_history, files=request.files, **header)
        #: The config of the run's children (LLM and tool calls): nested under the agent's chain run,
        #: with the run's workspace for the tools.
        self.config = patch_config(config, configurable={"workspace": self.workspace})
        self._run_manager = run_manager
        self._listener = listener
        #: Where stage events go as LangChain custom events: what ``adispatch_custom_event(..., config=self.config)``
        #: builds for every event, built once (a run of 10 tasks emits ~25 events).
        self._events = get_async_callback_manager_for_config(self.config)
        self._calls_reported = 0

    def child(self, tag: str) -> RunnableConfig:
        """The config of one stage's calls, tagged (``plan``, ``selection``...)."""
        return patch_config(self.config, callbacks=self._run_manager.get_child(tag))

    @contextlib.asynccontextmanager
    async def stage(self, name: str) -> AsyncIterator[Stage]:
        """One stage of the run (``plan``, ``selection``, ``execution``, ``response``) with its
        bookkeeping in one place: its calls' config (``Stage.config``), the trace fields it records
        (``Stage.record``: each field has this one writer), its time (the trace's ``timings``, also
        when it fails), then an ``llm_cut_off`` event for each of its LLM answers that ended early, then
        the event that closes it (``Stage.announce``)."""
        stage = Stage(self, name)
        started = time.perf_counter()
        try:
            yield stage
        finally:
            self.trace.timing(name, time.perf_counter() - started)
        await self.report_cut_offs()
        if stage.event is not None:
            await self.emit(stage.event[0], **stage.event[1])

    async def emit(self, name: str, **fields: Any) -> dict[str, Any]:
        """A stage event: recorded in the trace, handed to a stage-event listener, and dispatched as
        a LangChain custom event (``on_custom_event`` in ``astream_events``)."""
        if name not in STAGE_EVENTS:
            raise ValueError(f"unknown stage event {name!r}")
        event = self.trace.event(name, record=name != RESPONSE_DELTA, **fields)
        if self._listener is not None:
            self._listener(event)
        await self._events.on_custom_event(name, event, run_id=self._events.parent_run_id)
        return event

    async def report_cut_offs(self) -> None:
        """An ``llm_cut_off`` stage event for each LLM call recorded since the last report whose answer
        ended before the model finished it: cut at its token bound, or stopped repeating itself."""
        calls = self.trace.llm_calls(self._calls_reported)
        self._calls_reported += len(calls)
        for call in calls:
            reason = call.get("finish_reason")
            if reason in CUT_OFF:
                await self.emit(LLM_CUT_OFF, stage=call.get("stage"), finish_reason=reason,
                                max_tokens=call.get("max_tokens"), note=cut_off_note(call.get("stage"), reason,
                                                                                    call.get("max_tokens")))


class Stage:
    """One stage of a run, as ``AgentRun.stage`` opens it."""

    def __init__(self, run: AgentRun, name: str):
        self.name = name
        #: The config of the stage's LLM and tool calls (tagged with its name).
        self.config = run.child(name)
        self._trace = run.trace
        self.event: tuple[str, dict[str, Any]] | None = None

    def record(self, **fields: Any) -> None:
        """Write the stage's fields into the trace (``plan``, ``selections``, ``results``...)."""
        for key, value in fields.items():
            self._trace.set(key, value)

    def announce(self, name: str, **fields: Any) -> None:
        """The stage event emitted when the stage ends well (after its cut-off reports)."""
        self.event = (name, fields)

    def answered(self, answer: Answer) -> None:
        """The run's final answer: recorded (``Answer.trace_fields``) and announced (``response``)."""
        self.record(**answer.trace_fields())
        self.announce(RESPONSE, output=answer.text, invented_paths=answer.invented)


class Agent(Runnable[AgentInput, dict[str, Any]]):
    """Base of the three agents. Subclasses set ``limits`` and ``workspace_root`` and implement
    ``_steps``: an async generator that does the work and yields pieces of the output
    (``{"plan": ...}``, ``{"output": ...}``...); what they leave out gets its default."""

    limits: RunLimits | None = None  # the step-by-step agents' limits (the global agent has its own)
    agent_name: str | None = None  # the trace's "agent" (default: the Runnable's name)
    workspace_root: str | Path | None = None

    async def _steps(self, run: AgentRun) -> AsyncIterator[dict[str, Any]]:
        raise NotImplementedError
        yield {}  # pragma: no cover - makes this an async generator

    # ------------------------------------------------------------ the Runnable surface

    def invoke(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:
        return run_sync(self.ainvoke(input, config, **kwargs))

    async def ainvoke(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:
        output: Any = None
        async for piece in self.astream(input, config, **kwargs):
            output = piece if output is None else output + piece
        return ordered(output)

    def stream(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[dict[str, Any]]:
        yield from iterate_sync(self.astream(input, config, **kwargs))

    async def astream(self, input: AgentInput, config: RunnableConfig | None = None,
                      **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        usage = UsageCounter()
        config = merge_configs(ensure_config(config), {"callbacks": [usage]})
        async for piece in self._atransform_stream_with_config(
                _once(input), self._run, config, usage=usage, listener=kwargs.get("stage_listener")):
            yield piece

    async def astream_stage_events(self, input: AgentInput, config: RunnableConfig | None = None
                                   ) -> AsyncIterator[dict[str, Any]]:
        """The stage events as they happen, then ``{"event": "final", "t": ..., "output": <invoke's output>}``.

        The run is a task that hands each event over a queue; stopping the iteration cancels it.
        """
        events: asyncio.Queue[Any] = asyncio.Queue()
        end = object()
        started = time.perf_counter()
        runner = asyncio.ensure_future(self.ainvoke(input, config, stage_listener=events.put_nowait))
        runner.add_done_callback(lambda _: events.put_nowait(end))
        try:
            while (event := await events.get()) is not end:
                yield event
            output = runner.result()  # the run failed: its error is raised here
            yield {"event": FINAL, "t": round(time.perf_counter() - started, 6), "output": output}
        finally:
            if not runner.done():  # the consumer stopped early: cancel the run
                runner.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await runner
            elif not runner.cancelled():
                runner.exception()  # retrieved, so an abandoned failure is not logged as unhandled

    def stream_stage_events(self, input: AgentInput, config: RunnableConfig | None = None) -> Iterator[dict[str, Any]]:
        """``astream_stage_events`` for sync code; closing the iterator cancels the run."""
        yield from iterate_sync(self.astream_stage_events(input, config))

    def as_tool(self, args_schema: Any = None, *, name: str | None = None, description: str | None = None,
                arg_types: dict[str, type] | None = None) -> BaseTool:
        """This agent as a LangChain tool for another agent: it takes ``request`` (and ``files``, paths
        the request is about) and returns the answer as text (produced files are named in it). With
        ``args_schema`` or ``arg_types``, LangChain's ``Runnable.as_tool`` (the whole output dict)."""
        if args_schema is not None or arg_types is not None:
            return super().as_tool(args_schema, name=name, description=description, arg_types=arg_types)
        agent = self

        async def answer(request: str, config: RunnableConfig, files: list[str] | None = None) -> str:
            output = await agent.ainvoke({"input": request, "files": files or []}, config)
            return output["output"]

        def answer_sync(request: str, config: RunnableConfig, files: list[str] | None = None) -> str:
            return run_sync(answer(request, config, files))

        return StructuredTool.from_function(
            answer_sync, coroutine=answer, name=name or self.get_name(), args_schema=AgentToolInput,
            description=description or "Solve a request with AI models (Hugging Face tasks): images, audio, "
                                       "video and text, in several steps when needed. Returns the answer.")

    # ------------------------------------------------------------ the lifecycle

    async def _run(self, inputs: AsyncIterator[Any], run_manager: Any, config: RunnableConfig, *,
                   usage: UsageCounter, listener: Listener | None) -> AsyncIterator[AddableDict]:
        value = None
        async for value in inputs:
            pass
        request = AgentRequest.parse(value)
        run = AgentRun(self.agent_name or self.get_name(), request, self.limits, workspace_root=self.workspace_root,
                       config=config, run_manager=run_manager, usage=usage, listener=listener)
        output: dict[str, Any] = {}
        try:
            async for piece in self._steps(run):
                output = dict(AddableDict(output) + AddableDict(piece))  # "output" may come in pieces
                yield AddableDict(piece)
            rest = {key: value for key, value in _DEFAULTS.items() if key not in output}
            output.update(rest)
            if request.as_messages:  # a LangGraph messages state: the answer goes back as a message
                rest["messages"] = [AIMessage(content=output["output"], name=run.trace.data.get("agent"))]
            self._record(run)
            path = str(run.trace.write())
        except BaseException as error:  # failed, cancelled, or the consumer stopped: keep the record
            name = "CancelledError" if isinstance(error, GeneratorExit) else type(error).__name__
            run.trace.set("error", f"{name}: {error}")
            self._record(run)
            run.trace.write()
            raise
        yield AddableDict({**rest, "trace": path})

    def _record(self, run: AgentRun) -> None:
        """Write what the run used into its trace (also for a run that failed half-way), and the
        default of each output field no stage recorded (the stages record their own)."""
        for key, value in _DEFAULTS.items():
            run.trace.setdefault(key, value)
        usage = run.usage.as_dict()
        if self.limits is not None:  # a step-by-step run: what it used of its limits, and why it stopped
            usage.update(steps=run.budget.steps, repeats=run.budget.repeats)
            run.trace.set("stopped", run.budget.stop_reason)
        run.trace.set("usage", usage)


class AgentToolInput(BaseModel):
    """What ``Agent.as_tool`` takes."""

    request: str = Field(description="The request, in the user's own words.")
    files: list[str] = Field(default_factory=list, description="Paths or URLs of the files the request is about.")


def cut_off_note(stage: str | None, reason: str, max_tokens: int | None) -> str:
    """What the trace and the events say of an answer that ended before the model finished it."""
    if reason == REPETITION:
        return f"the {stage} answer was stopped: the model was repeating itself"
    bound = f" of {max_tokens} tokens" if max_tokens else ""
    return f"the {stage} answer was cut off at its token bound{bound}"


def ordered(output: Any) -> dict[str, Any]:
    """The output as a plain dict in the contract's key order."""
    output = dict(output or {})
    return {**{key: output.pop(key) for key in OUTPUT_KEYS if key in output}, **output}


async def _once(value: Any) -> AsyncIterator[Any]:
    yield value


# ---------------------------------------------------------------- sync calls
#
# A sync call runs the coroutine on an event loop of its own, in the caller's thread; a caller
# that already runs a loop (Jupyter, a callback inside a run) gets a worker thread for it. The
# caller's context variables go with the coroutine. Ctrl-C cancels the run (its trace is written).
# Sync work the loop hands to threads (sync tools, sync callbacks) runs in daemon threads: a tool
# that hangs past the run's time budget delays neither the run's end nor the process's exit.


class _DaemonThreads(ThreadPoolExecutor):  # asyncio accepts only ThreadPoolExecutors
    """The loop's default executor: each call in a daemon thread of its own, never waited for."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()

        def work() -> None:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as error:  # noqa: BLE001 - handed to whoever awaits it
                    future.set_exception(error)

        threading.Thread(target=work, name="hugginggpt-call", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to wait for: the threads are daemons, and a hung one is left behind."""


def _runner() -> asyncio.Runner:
    runner = asyncio.Runner()
    runner.get_loop().set_default_executor(_DaemonThreads())
    return runner


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code."""
    def run() -> T:
        with _runner() as runner:
            return runner.run(coro)

    if not _loop_running():
        return run()
    context = contextvars.copy_context()
    with ThreadPoolExecutor(1, thread_name_prefix="hugginggpt-run") as pool:
        return pool.submit(context.run, run).result()


def iterate_sync(agen: AsyncIterator[T]) -> Iterator[T]:
    """Iterate an async generator from sync code; stopping early (or Ctrl-C) closes it, which
    cancels its run, before this returns."""
    context = contextvars.copy_context()
    pool = ThreadPoolExecutor(1, thread_name_prefix="hugginggpt-stream") if _loop_running() else None
    runner = pool.submit(_runner).result() if pool is not None else _runner()

    def step(call: Callable[[], Any]) -> Any:
        if pool is not None:
            return pool.submit(call).result()
        if _loop_running():  # closed (garbage-collected) from inside some event loop
            with ThreadPoolExecutor(1) as closer:
                return closer.submit(call).result()
        return call()

    async def next_item() -> Any:
        return await agen.__anext__()

    async def close() -> None:
        await agen.aclose()

    try:
        while True:
            try:
                item = step(lambda: runner.run(next_item(), context=context))
            except StopAsyncIteration:
                return
            yield item
    finally:
        try:
            step(lambda: runner.run(close(), context=context))
        finally:
            step(runner.close)
            if pool is not None:
                pool.shutdown()
