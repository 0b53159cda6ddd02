"""GlobalPlanAgent: HuggingGPT's four stages (plan, select models, execute, respond) as a Runnable.

The whole plan is made up front by one LLM call, then run as a task graph; this is what lets
independent tasks run in parallel and keeps the LLM calls per request constant (2-3), unlike a
ReAct loop. The run lifecycle (trace, usage, callbacks, events, streaming, cancellation) is
``hugginggpt.agent.run.Agent``'s; this module provides the four stages as the agent's steps.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from hugginggpt.agent import events as ev
from hugginggpt.agent.plan.demonstrations import DEFAULT_K
from hugginggpt.agent.plan import Plan, describe_tools
from hugginggpt.agent.plan.planner import Planner, PlanResult
from hugginggpt.agent.request import AgentRequest
from hugginggpt.agent.answer_check import Answer, known_files
from hugginggpt.agent.response import astream_response, response_messages
from hugginggpt.agent.run import Agent, AgentRun, Stage, run_sync
from hugginggpt.agent.scheduler import Scheduler
from hugginggpt.agent.selection import ModelSelector
from hugginggpt.llm.structured import ConstrainedCache, Structured
from hugginggpt.tools.table import TaskSpec


class GlobalPlanAgent(Agent):
    """HuggingGPT as a LangChain Runnable; see docs/ARCHITECTURE.md "Agent contract" for the output.

    ``tools``: any LangChain tools (default: one per task of the task table); ``catalog``: where
    model candidates come from (default: the shipped catalog when the default tools are used).
    ``workspace_root``: each run gets its own folder under it (default: ``$HUGGINGGPT_HOME``).
    ``demonstrations``: few-shot examples chosen per request, after the block of examples for the request's kinds of input.
    ``execute=False`` stops after model selection (plan-only comparisons).
    """

    name = "GlobalPlanAgent"

    def __init__(self, llm: BaseChatModel, tools: Sequence[BaseTool] | None = None, catalog: Any = None, *,
                 top_k: int = 5, max_concurrency: int = 4, task_timeout: float = 300, history_tokens: int = 2000,
                 workspace_root: str | Path | None = None, structured: Structured = "auto", execute: bool = True,
                 demonstrations: int = DEFAULT_K):
        self.llm = llm
        self.demonstrations = demonstrations
        self._tools = list(tools) if tools is not None else None
        self._catalog = catalog
        self.top_k = top_k
        self.max_concurrency = max_concurrency
        self.task_timeout = task_timeout
        self.history_tokens = history_tokens
        self.workspace_root = Path(workspace_root) if workspace_root is not None else None
        self.structured = structured
        self.execute = execute
        self._task_specs: dict[str, TaskSpec] | None = None
        self._constrained = ConstrainedCache(llm, structured)
        self._planner: Planner | None = None

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
    def task_specs(self) -> dict[str, TaskSpec]:
        if self._task_specs is None:
            from hugginggpt.tools.table import task_table

            self._task_specs = describe_tools(self.tools, task_table())
        return self._task_specs

    @property
    def constrained(self) -> ConstrainedCache:
        """The controller constrained to each schema (plan, selections), built once per LLM and mode."""
        if not self._constrained.serves(self.llm, self.structured):  # the LLM or mode was changed
            self._constrained = ConstrainedCache(self.llm, self.structured)
        return self._constrained

    @property
    def planner(self) -> Planner:
        """Stage 1, made once (again only when the LLM, the tasks or a planning setting was changed)."""
        planner = self._planner
        if (planner is None or planner.llm is not self.llm or planner.tasks is not self.task_specs
                or (planner.structured, planner.demonstrations, planner.history_tokens)
                != (self.structured, self.demonstrations, self.history_tokens)):
            planner = self._planner = Planner(self.llm, self.task_specs, structured=self.structured,
                                              demonstrations=self.demonstrations, history_tokens=self.history_tokens,
                                              constrained=self.constrained)
        return planner

    def warm_up(self) -> int:
        """Have the controller read the planning prompt's static part now, where it keeps what it read
        (the embedded llama.cpp model's prompt cache: ``prefill``), so that the first request reads only
        its own words. The prompt tokens read; 0 when the controller keeps no prompt state."""
        prefill = getattr(self.llm, "prefill", None)
        if not callable(prefill) or not self.task_specs:
            return 0
        return prefill(self.planner.static_messages())

    # ------------------------------------------------------------ planning only

    async def aplan(self, input: str, chat_history: list[Any] | None = None, *, files: list[str] | None = None,
                    config: RunnableConfig | None = None) -> PlanResult:
        """Stage 1 alone: the validated plan, its repairs, the raw LLM answers and token usage."""
        request = AgentRequest.parse({"input": input, "chat_history": chat_history or [], "files": files or []})
        return await self.planner.plan(request, config=config)

    def plan(self, input: str, chat_history: list[Any] | None = None, *, files: list[str] | None = None,
             config: RunnableConfig | None = None) -> PlanResult:
        return run_sync(self.aplan(input, chat_history, files=files, config=config))

    # ------------------------------------------------------------ the steps (hugginggpt.agent.run drives them)

    async def _steps(self, run: AgentRun) -> AsyncIterator[dict[str, Any]]:
        request = run.request
        async with run.stage("plan") as stage:
            planned = await self.planner.plan(request, config=stage.config, trace=run.trace)
            plan, steps = planned.plan, planned.plan.as_list()
            stage.record(plan=steps, repairs=planned.repairs, raw_plan_outputs=planned.raw_outputs)
            stage.announce(ev.PLAN, plan=steps, repairs=planned.repairs)
        yield {"plan": steps}

        async with run.stage("selection") as stage:
            selections = await self._select(request.input, plan, run, stage.config)
            stage.record(selections=selections)
            stage.announce(ev.SELECTION, selections=selections)
        yield {"selections": selections}
        if not self.execute:
            return

        async with run.stage("execution") as stage:
            outcomes = await self._execute(plan, selections, run, stage)
        yield {"results": outcomes}

        async with run.stage("response") as stage:
            messages = response_messages(request.input, plan, selections, outcomes,
                                         chat_history=request.chat_history, history_tokens=self.history_tokens)
            streamed = ""
            async for item in astream_response(self.llm, messages, known_files(outcomes, request.files), stage.config,
                                               run.trace, outcomes=outcomes):
                if isinstance(item, Answer):
                    answer = item
                else:  # the answer as it is written: output pieces that add up to its start
                    streamed += item
                    await run.emit(ev.RESPONSE_DELTA, text=item)
                    yield {"output": item}
            stage.answered(answer)
        yield {"output": answer.text[len(streamed):]}  # the notes and failure report after the streamed text

    async def _select(self, request: str, plan: Plan, run: AgentRun, config: RunnableConfig) -> dict[int, dict[str, Any]]:
        selector = ModelSelector(self.llm, self.catalog if plan.tasks else None, top_k=self.top_k,
                                 structured=self.structured, trace=run.trace, constrained=self.constrained,
                                 runnable=self._tool_can_run)
        return await selector.select(request, plan, self.task_specs, config)

    def _tool_can_run(self, task: str, model: str) -> bool:
        """Whether the tool of ``task`` can run ``model`` (tools without ``can_run`` accept any)."""
        tool = next((t for t in self.tools if t.name == task), None)
        can_run = getattr(tool, "can_run", None)
        return True if can_run is None else bool(can_run(model))

    async def _execute(self, plan: Plan, selections: dict[int, dict[str, Any]], run: AgentRun,
                       stage: Stage) -> dict[int, dict[str, Any]]:
        scheduler = Scheduler(plan, {t.name: t for t in self.tools}, self.task_specs, selections=selections,
                              workspace=run.workspace, max_concurrency=self.max_concurrency,
                              task_timeout=self.task_timeout, emit=run.emit)
        stage.record(results=scheduler.outcomes)  # filled as tasks end: a cancelled run keeps what ran
        outcomes = await scheduler.run(stage.config)
        stage.record(results=outcomes)
        return outcomes
