"""The loop that the step-by-step agents (function calling, ReAct) share: one run's input, its
workspace, trace and budget, and the Runnable surface (invoke, stream, astream) around a subclass's
``_loop``."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, merge_configs
from langchain_core.tools import BaseTool

from hugginggpt.agent.request import AgentRequest
from hugginggpt.agent.tool_trace import Budget, RunLimits, ToolTrace
from hugginggpt.agent.trace import Trace, UsageCounter


class AgentRun:
    """Everything one run owns: workspace, trace, usage counter, budget, tool trace, event sink."""

    def __init__(self, agent: str, request: AgentRequest, limits: RunLimits, *,
                 workspace_root: str | Path | None, sink: Callable[[dict], None], config: RunnableConfig | None):
        self.workspace = request.new_workspace(workspace_root)
        self.request = request
        self.usage = UsageCounter()
        self.budget = Budget(limits)
        self.trace = Trace(self.workspace.root / "trace.json", agent=agent, input=request.input,
                           files=request.files, limits=asdict(limits))
        self._sink = sink
        self.tools = ToolTrace(emit=self.emit)
        self.config = merge_configs(ensure_config(config), {
            "callbacks": [self.usage],
            "configurable": {"workspace": self.workspace},
        })

    def emit(self, name: str, **fields: Any) -> dict[str, Any]:
        """Record a stage event in the trace and hand it to whoever streams the run."""
        event = self.trace.event(name, **fields)
        self._sink(event)
        return event

    def finish(self, output_text: str) -> dict[str, Any]:
        """Write the trace and return the contract's output."""
        self.emit("response", output=output_text)
        output = {"output": output_text, "plan": self.tools.plan, "selections": {},
                  "results": self.tools.results}
        self.trace.set("stopped", self.budget.stop_reason)
        self.trace.set("usage", {**self.usage.as_dict(), "steps": self.budget.steps, "repeats": self.budget.repeats})
        for key, value in output.items():
            self.trace.set(key, value)
        output["trace"] = str(self.trace.write())
        return output

    def fail(self, error: BaseException) -> None:
        """Write what is known of a run that raised, so it can still be explained."""
        self.trace.set("error", f"{type(error).__name__}: {error}")
        self.trace.set("plan", self.tools.plan)
        self.trace.set("results", self.tools.results)
        self.trace.set("usage", self.usage.as_dict())
        self.trace.write()


class ToolLoopAgent(Runnable[Any, dict]):
    """Base of the agents that call tools step by step; subclasses implement ``_loop``.

    ``invoke`` runs in the caller's thread; ``stream`` runs the same loop in a worker thread and
    yields its stage events as they happen, then ``{"event": "final", "output": {...}}``.
    """

    agent_name = "tool-loop"

    def __init__(self, llm: BaseChatModel, tools: Sequence[BaseTool] | None = None, *, max_steps: int = 10,
                 max_llm_calls: int = 12, time_budget_s: float = 300, workspace_root: str | Path | None = None,
                 max_repeats: int = 2):
        if tools is None:
            from hugginggpt.tools import build_tools

            tools = build_tools()
        self.llm = llm
        self.tools = list(tools)
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            raise ValueError(f"tool names must be unique, got {names}")
        self.limits = RunLimits(max_steps=max_steps, max_llm_calls=max_llm_calls,
                                time_budget_s=time_budget_s, max_repeats=max_repeats)
        self.workspace_root = workspace_root

    def _loop(self, run: AgentRun) -> str:
        """Drive the LLM and the tools; return the final answer text."""
        raise NotImplementedError

    def _run(self, input: Any, config: RunnableConfig | None, sink: Callable[[dict], None]) -> dict:
        request = AgentRequest.parse(input)
        run = AgentRun(self.agent_name, request, self.limits, workspace_root=self.workspace_root,
                       sink=sink, config=config)
        try:
            text = self._loop(run)
        except BaseException as error:
            run.fail(error)
            raise
        return run.finish(text)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        return self._run(input, config, sink=lambda event: None)

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[dict]:
        events: queue.Queue = queue.Queue()
        done = object()
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["output"] = self._run(input, config, sink=events.put)
            except BaseException as error:  # re-raised in the consumer's thread
                outcome["error"] = error
            finally:
                events.put(done)

        worker = threading.Thread(target=work, name=f"{self.agent_name}-run", daemon=True)
        worker.start()
        while (event := events.get()) is not done:
            yield event
        worker.join()
        if "error" in outcome:
            raise outcome["error"]
        yield {"event": "final", "output": outcome["output"]}

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[dict]:
        events = iter(self.stream(input, config))
        end = object()
        while (event := await asyncio.to_thread(next, events, end)) is not end:
            yield event
