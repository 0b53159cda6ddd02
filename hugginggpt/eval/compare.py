"""Run several agents on TaskBench requests with one LLM and record their plans; the report of the
recorded plans is ``eval/report.py``'s.

Two modes. ``plan``: no model runs; the global-plan agent only plans (``aplan``), and the tool-loop
agents (ReAct, function calling) get stand-in tools that record each call and return a placeholder
of the task's output kinds (a file path for images, audio and video; a text), named after the call
itself, so their loop continues as it would. ``full``: the agents run for real, with the real tools.

Per agent, predictions go to ``<out>/predictions/<agent>.json`` in TaskBench's format (one JSON
line per request, plus a ``harness`` entry with time, LLM calls, tokens and error), each line written
as its request finishes. A re-run skips requests already there, so an interrupted comparison resumes
where it stopped (an unfinished last line is dropped and its request runs again); once an agent has
run every request, its file is rewritten in the requests' order.

``concurrency`` requests run at once per agent (asyncio; they start in the requests' order), for every
agent, the peers too, and for the critic's pass. A request's ``seconds`` are its own, from its start
to its end, not its wait for a free slot. A request that fails (an error, a timeout, an unreadable
answer) is recorded with its reason; one refused with HTTP 429 runs again after its ``Retry-After``
(at most ``RATE_LIMIT_RETRIES`` times). The embedded llama.cpp controller answers one call at a time:
with it, requests run one after another whatever ``concurrency`` asks, and the tables say so.
``shard`` runs one fixed part of the requests (``eval/shards.py``; ``run.json`` records the selection).

Tools offered (``tools``): ``domain`` (TaskBench's protocol: only the tasks the domain's tools map
to, as TaskBench gives its model ``tool_desc.json``) or ``all`` (every task of our table: the
product question). With a ``critic`` LLM, each plan is also judged by HuggingGPT's critic prompt;
verdicts go to ``<out>/predictions/<agent>.critic.json`` (resumable too) and into the tables as the
critic pass rate (yes / verdicts) with the answers that gave no verdict counted apart.

Besides ours, ``agents`` may name the ecosystem's agents (``eval/peers.py``: LangChain's HuggingGPT
planner, ``create_agent``, smolagents' tool-calling and code agents), in ``plan`` mode on the same
placeholder tools; their calls are recorded as our tool-loop agents' are, scored the same, and their
unreadable answers (and ReAct's, from its trace) counted apart (``parse_failures``) from the requests
that failed (``failures``).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import itertools
import json
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from langchain_core.tools import StructuredTool

from hugginggpt.agent.trace import UsageCounter
from hugginggpt.config import AGENT_CLASSES, AGENTS
from hugginggpt.errors import HuggingGPTError, error_line
from hugginggpt.eval.jsonl import cut_unfinished_line, write_jsonl
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.peers import PEER_NAMES
from hugginggpt.eval.rate_limit import retry_after
from hugginggpt.eval.report import RESAMPLES, AgentReport, Report, build_report, critic_path, predictions_path
from hugginggpt.eval.scoring import load_predictions
from hugginggpt.eval.shards import Shard, write_manifest
from hugginggpt.eval.taskbench import GRAPH_TYPES, TaskBenchDataset, TaskBenchSample
from hugginggpt.tools.resources.sniff import KIND_SUFFIX
from hugginggpt.tools.table import MEDIA_KINDS

#: ours (the agent registry, ``config.AGENT_CLASSES``), then the ecosystem's agents (eval/peers.py,
#: the ``peers`` extra; planning-only mode)
ALL_AGENT_NAMES = (*AGENTS, *PEER_NAMES)
MODES = ("plan", "full")
TOOL_SETS = ("domain", "all")
#: times a request refused with HTTP 429 runs again (after its Retry-After) before it is recorded as failed
RATE_LIMIT_RETRIES = 5
_EXTENSIONS = {kind: KIND_SUFFIX[kind] for kind in MEDIA_KINDS}  # the one list: tools/resources/sniff.py

AgentFactory = Callable[..., Any]  # (llm, mode, workspace root, tasks=None) -> agent
T = TypeVar("T")


class ProgressBar(Protocol):
    """What a comparison reports its progress to: one ``update`` per finished request."""

    def update(self, failed: bool) -> None: ...

    def close(self) -> None: ...


#: (label, requests to run, requests an earlier run finished) -> a bar
ProgressFactory = Callable[[str, int, int], ProgressBar]


# ----- stand-in tools for planning-only runs -----

def placeholder_tools(tasks: Iterable[str] | Mapping[str, Any] | None = None,
                      root: str | Path = ".") -> list[StructuredTool]:
    """One tool per task with the task's real name, description and argument schema, that runs
    nothing: it returns a placeholder of each output kind the task produces, named after the task and
    a digest of the call's arguments (the same call, the same placeholder; another call, another one),
    so a request's placeholders never depend on what other requests ran before or beside it.

    ``tasks``: names of the task table's tasks, or specs by name (a benchmark domain's, whose tool may
    read another kind than the table's task: ``TaskBenchMapping.domain_specs``); such a tool carries its
    spec (``metadata["spec"]``), which the agents describe it by."""
    from hugginggpt.tools import args_model, task_table
    from hugginggpt.tools.factory import tool_description

    table = task_table()
    if isinstance(tasks, Mapping):
        specs = list(tasks.values())
    else:
        specs = [table[name] for name in tasks] if tasks is not None else list(table.values())
    folder = Path(root).absolute() / "placeholders"

    def make(spec: Any) -> StructuredTool:
        def run(**args: Any) -> dict[str, Any]:
            n = call_digest({key: value for key, value in args.items() if value is not None})  # as given
            result: dict[str, Any] = {}
            for kind in spec.outputs:
                if kind in _EXTENSIONS:
                    result[kind] = str(folder / f"{spec.name}-{n}{_EXTENSIONS[kind]}")
                elif kind == "text":
                    result["text"] = f"(output {n} of {spec.name})"
                elif kind == "data":
                    result["data"] = {"placeholder": n}
            return result

        own = {} if table.get(spec.name) == spec else {"spec": spec.model_dump()}
        return StructuredTool(name=spec.name, description=tool_description(spec), args_schema=args_model(spec),
                              func=run, metadata={"task": spec.name, "placeholder": True, **own})

    return [make(spec) for spec in specs]


def call_digest(args: Mapping[str, Any]) -> str:
    """Eight hex digits that name a tool call by its arguments."""
    text = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


# ----- agents -----

def build_agent(name: str, llm: Any, mode: str, root: Path,
                tasks: Sequence[str] | Mapping[str, Any] | None = None) -> Any:
    """The agent called ``name`` (one of ours, ``config.AGENT_CLASSES``, or a peer of eval/peers.py)
    for ``mode``, on ``llm``, offered ``tasks`` (names or specs by name; None: every task of the table)."""
    if name in PEER_NAMES:
        from hugginggpt.eval.peers import build_peer

        if mode != "plan":
            raise HuggingGPTError(f"agent {name} is compared in --mode plan only")
        return build_peer(name, llm, mode, placeholder_tools(tasks, root=root))
    if name not in AGENT_CLASSES:
        raise HuggingGPTError(f"unknown agent {name!r} (choose from {', '.join(ALL_AGENT_NAMES)})")
    module, class_name = AGENT_CLASSES[name]
    cls = getattr(importlib.import_module(module), class_name)
    if mode == "plan":
        tools = placeholder_tools(tasks, root=root)
    elif tasks is not None:
        from hugginggpt.tools.factory import build_tools

        tools = build_tools(tasks)
    else:
        tools = None
    return cls(llm, tools=tools, workspace_root=root / "runs")


def check_agents(names: Sequence[str], mode: str) -> None:
    """Before anything runs: every name known, peers only in ``plan`` mode and their packages installed
    (a missing one: ``PeerMissingError``, one line naming the ``peers`` extra)."""
    unknown = [a for a in names if a not in ALL_AGENT_NAMES]
    if unknown or not names:
        raise HuggingGPTError(f"unknown agent(s) {', '.join(unknown) or '(none)'}; "
                              f"choose from {', '.join(ALL_AGENT_NAMES)}")
    peers = [a for a in names if a in PEER_NAMES]
    if peers and mode != "plan":
        raise HuggingGPTError(f"{', '.join(peers)}: the ecosystem's agents are compared in --mode plan only")
    if peers:
        from hugginggpt.eval.peers import require

        for name in peers:
            require(name)


def answers_one_call_at_a_time(llm: Any) -> bool:
    """Whether ``llm`` is the embedded llama.cpp controller, which serialises its calls."""
    module = sys.modules.get("hugginggpt.llm.llamacpp")  # not loaded: no embedded model exists
    return module is not None and isinstance(llm, module.LlamaCppChatModel)


def plan_list(value: Any) -> list[dict[str, Any]]:
    """A plan as the contract's list of nodes, from a list, an agent output, or a plan object."""
    if isinstance(value, list):
        return [dict(node) for node in value]
    if isinstance(value, Mapping) and "plan" in value:
        return plan_list(value["plan"])
    if hasattr(value, "as_list"):
        return plan_list(value.as_list())
    if hasattr(value, "plan"):
        return plan_list(value.plan)
    raise TypeError(f"cannot read a plan from {type(value).__name__}")


async def run_request(agent: Any, request: str, mode: str, timeout: float | None = None) -> dict[str, Any]:
    """Run one request; the plan, time, usage and error (an error is recorded, not raised). A request
    still running after ``timeout`` seconds is stopped and recorded as failed; one refused with HTTP 429
    gets ``retry_after``, the seconds its server asked to wait."""
    usage = UsageCounter()
    config = {"callbacks": [usage]}
    started = time.perf_counter()
    plan: list[dict[str, Any]] = []
    error = None
    extra: dict[str, Any] = {}
    try:
        if mode == "plan" and hasattr(agent, "aplan"):
            aplan = agent.aplan
            accepts_config = "config" in inspect.signature(aplan).parameters
            call = aplan(request, config=config) if accepts_config else aplan(request)
        else:
            call = agent.ainvoke({"input": request, "chat_history": []}, config=config)
        result = await asyncio.wait_for(call, timeout)
        plan = plan_list(result)
        # the planner's raw answers and repairs, when it reports them: plans can be re-validated offline
        extra = {key: getattr(result, key) for key in ("raw_outputs", "repairs") if hasattr(result, key)}
        if isinstance(result, Mapping) and "parse_errors" in result:  # a peer: its own account of the run
            extra.update({key: result[key] for key in ("raw_outputs", "parse_errors") if key in result})
            error = result.get("error") or None
        elif isinstance(result, Mapping) and result.get("trace"):  # ours: the unreadable turns its trace records
            extra["parse_errors"] = trace_parse_errors(result["trace"])
    except TimeoutError:
        error = f"timeout: no result within {timeout:g} s"
    except Exception as exc:  # one failing request must not stop a comparison
        error = f"{type(exc).__name__}: {exc}"
        wait = retry_after(exc)
        if wait is not None:
            extra["retry_after"] = wait
    return {"plan": plan, "seconds": round(time.perf_counter() - started, 6), "error": error, **usage.as_dict(),
            **extra}


def trace_parse_errors(path: str | Path) -> int:
    """The ``parse_error`` events of a run's trace (ReAct's turns it could not read); 0 without a trace."""
    from hugginggpt.agent.events import PARSE_ERROR

    try:
        events = json.loads(Path(path).read_text(encoding="utf-8")).get("events") or []
    except (OSError, ValueError, AttributeError):
        return 0
    return sum(1 for event in events if isinstance(event, dict) and event.get("event") == PARSE_ERROR)


def judged_plan(row: Mapping[str, Any]) -> list[Any]:
    """What the critic sees of a prediction: the agent's own plan when recorded, else TaskBench's nodes."""
    plan = (row.get("harness") or {}).get("plan")
    if isinstance(plan, list):
        return plan
    return [{"task": node.get("task"), "id": i, "args": node.get("arguments")}
            for i, node in enumerate((row.get("result") or {}).get("task_nodes") or []) if isinstance(node, Mapping)]


async def bounded(items: Sequence[T], work: Callable[[T], Awaitable[None]], limit: int) -> None:
    """``work`` on every item, at most ``limit`` at once, started in the items' order (first come, first
    served); the first exception cancels the rest and is raised."""
    pending = iter(items)

    async def worker() -> None:
        for item in pending:  # one shared iterator: each free worker takes the next item
            await work(item)

    async with asyncio.TaskGroup() as group:
        for _ in range(min(max(1, limit), len(items))):
            group.create_task(worker())


# ----- the comparison -----

@dataclass
class Comparison:
    """Runs agents on a dataset's requests and writes predictions, tables and plots to ``out``."""

    dataset: TaskBenchDataset
    llm: Any
    out: Path
    agents: Sequence[str] = AGENTS
    mode: str = "plan"
    factory: AgentFactory = build_agent
    mapping: TaskBenchMapping | None = None
    progress: ProgressFactory | None = None  # None or False: no progress shown
    tools: str = "domain"
    critic: Any = None  # an LLM judging each plan, or None
    concurrency: int = 1  # requests in flight per agent
    shard: Shard | None = None
    timeout: float | None = None  # seconds a request may take
    resamples: int = RESAMPLES  # bootstrap draws of the intervals
    reports: dict[str, AgentReport] = field(default_factory=dict)
    report: Report | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise HuggingGPTError(f"unknown mode {self.mode!r} (choose plan or full)")
        if self.tools not in TOOL_SETS:
            raise HuggingGPTError(f"--tools: unknown tool set {self.tools!r} (choose domain or all)")
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise HuggingGPTError(f"--concurrency must be a whole number of at least 1, got {self.concurrency!r}")
        if self.timeout is not None and self.timeout <= 0:
            raise HuggingGPTError(f"--timeout must be a positive number of seconds, got {self.timeout!r}")
        if self.progress is not None and self.progress is not False and not callable(self.progress):
            raise TypeError("progress: a callable (label, total, resumed) -> bar, or None")
        self.out = Path(self.out)
        self.mapping = self.mapping or TaskBenchMapping(self.dataset.tools)

    @property
    def in_flight(self) -> int:
        """Requests run at once: ``concurrency``, or 1 when a model answers one call at a time."""
        if answers_one_call_at_a_time(self.llm) or answers_one_call_at_a_time(self.critic):
            return 1
        return self.concurrency

    def notes(self) -> list[str]:
        """What the tables must say about how the requests ran."""
        if self.in_flight < self.concurrency:
            return [f"the embedded controller answers one call at a time, so the requests ran one after "
                    f"another (--concurrency {self.concurrency} was asked for); seconds are each request's own"]
        return []

    def offered_tasks(self) -> dict[str, Any] | None:
        """The tasks each agent is offered: the domain's (mapped, as the domain's tools read their inputs:
        ``TaskBenchMapping.domain_specs``), or None for the whole table."""
        if self.tools == "all":
            return None
        tasks = self.mapping.domain_specs()
        if not tasks:
            raise HuggingGPTError("--tools domain: none of the dataset's tools maps to a task of the table")
        return tasks

    def predictions_path(self, agent: str) -> Path:
        return predictions_path(self.out, agent)

    def critic_path(self, agent: str) -> Path:
        return critic_path(self.out, agent)

    async def arun(self, samples: Sequence[TaskBenchSample]) -> dict[str, AgentReport]:
        """Run every agent on ``samples`` (this shard's part of them), then write the tables."""
        selection = list(samples)
        mine = self.shard.select(selection) if self.shard else selection
        write_manifest(self.out, {"requests": [s.id for s in selection], "shard": str(self.shard) if self.shard else None,
                                  "agents": list(self.agents), "mode": self.mode, "tools": self.tools,
                                  "critic": self.critic is not None, "data": str(self.dataset.root),
                                  "notes": self.notes()})
        tasks = self.offered_tasks()
        for name in self.agents:
            agent = self.factory(name, self.llm, self.mode, self.out / name, tasks=tasks)
            await self._run_agent(name, agent, mine)
            if self.critic is not None:
                await self._judge(name, mine, tasks)
        self.report = build_report(self.dataset, self.out, self.agents, [s.id for s in mine], self.mode, self.tools,
                                   self.notes(), self.resamples)
        self.reports = self.report.reports
        self.report.write_tables()
        return self.reports

    def run(self, samples: Sequence[TaskBenchSample]) -> dict[str, AgentReport]:
        return asyncio.run(self.arun(samples))

    def write_tables(self) -> dict[str, Path]:
        """``metrics.csv``, ``metrics.md``, ``overview.md`` and ``summary.json`` of the last run."""
        if self.report is None:
            raise HuggingGPTError("nothing to tabulate: run the comparison first")
        return self.report.write_tables()

    async def _run_agent(self, name: str, agent: Any, samples: Sequence[TaskBenchSample]) -> None:
        async def one(sample: TaskBenchSample) -> dict[str, Any]:
            outcome = await self._attempt(agent, sample.request)
            plan = outcome.pop("plan")
            row = self.mapping.plan_to_prediction(sample.id, plan)
            row["harness"] = {"agent": name, "mode": self.mode, "tools": self.tools, "type": sample.type,
                              "n_tools": len(sample.nodes), **outcome, "plan": plan}
            return row

        await self._each(self.predictions_path(name), samples, one, f"{name} ({self.mode})",
                         lambda row: bool(row["harness"].get("error")))

    async def _attempt(self, agent: Any, request: str) -> dict[str, Any]:
        """``run_request``, run again after the server's Retry-After while it answers 429."""
        for attempt in itertools.count():
            outcome = await run_request(agent, request, self.mode, self.timeout)
            wait = outcome.pop("retry_after", None)
            if wait is None or attempt >= RATE_LIMIT_RETRIES:
                return {**outcome, "rate_limited": attempt} if attempt else outcome
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    async def _judge(self, name: str, samples: Sequence[TaskBenchSample], tasks: list[str] | None) -> None:
        """Critic verdicts for this agent's plans that have none yet (appended, resumable)."""
        from hugginggpt.agent.critic import ajudge_plan
        from hugginggpt.llm.structured import ConstrainedCache

        predictions = load_predictions(self.predictions_path(name))
        specs = _task_specs(tasks)
        cache = ConstrainedCache(self.critic, "auto")

        async def one(sample: TaskBenchSample) -> dict[str, Any]:
            try:
                verdict = await ajudge_plan(self.critic, sample.request, judged_plan(predictions[sample.id]), specs,
                                            constrained=cache)
            except Exception as exc:  # recorded as no verdict, with the reason
                return {"id": sample.id, "choice": None, "reason": "", "error": error_line(exc)}
            return {"id": sample.id, **verdict.as_dict()}

        judged = [s for s in samples if s.id in predictions]
        await self._each(self.critic_path(name), judged, one, f"{name} (critic)",
                         lambda row: bool(row.get("error")))

    async def _each(self, path: Path, samples: Sequence[TaskBenchSample],
                    work: Callable[[TaskBenchSample], Awaitable[dict[str, Any]]], label: str,
                    is_failure: Callable[[dict[str, Any]], bool]) -> None:
        """``work`` on each sample without a row in ``path`` yet, ``in_flight`` at once; each row appended
        as it comes, then, once all are there, the file rewritten in the samples' order."""
        path.parent.mkdir(parents=True, exist_ok=True)
        cut_unfinished_line(path)
        done = set(load_predictions(path)) if path.is_file() else set()
        todo = [s for s in samples if s.id not in done]
        bar = self._bar(label, len(todo), len(samples) - len(todo))
        try:
            with path.open("a", encoding="utf-8") as fh:
                async def one(sample: TaskBenchSample) -> None:
                    row = await work(sample)
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                    fh.flush()  # a crash or Ctrl-C loses at most the requests in flight
                    bar.update(is_failure(row))

                await bounded(todo, one, self.in_flight)
        finally:
            bar.close()
        in_order(path, [s.id for s in samples])

    def _bar(self, label: str, total: int, resumed: int) -> ProgressBar:
        return self.progress(label, total, resumed) if self.progress else _NoProgress()


class _NoProgress:
    def update(self, failed: bool) -> None:
        pass

    def close(self) -> None:
        pass


def in_order(path: Path, ids: Sequence[str]) -> None:
    """Rewrite a predictions file with one row per request (the last written wins), the rows of ``ids``
    first in that order, then any others as they were."""
    rows = load_predictions(path)
    wanted = [i for i in ids if i in rows]
    others = [i for i in rows if i not in set(ids)]
    write_jsonl(path, [rows[i] for i in [*wanted, *others]])


def _task_specs(tasks: Sequence[str] | Mapping[str, Any] | None) -> dict[str, Any]:
    from hugginggpt.tools.table import task_table

    if isinstance(tasks, Mapping):
        return dict(tasks)
    table = task_table()
    return {name: table[name] for name in (tasks if tasks is not None else table)}


def selected_types(text: str | None) -> list[str]:
    """``"single,dag"`` -> ["single", "dag"], checked against TaskBench's graph types."""
    types = [t.strip() for t in (text or ",".join(GRAPH_TYPES)).split(",") if t.strip()]
    unknown = [t for t in types if t not in GRAPH_TYPES]
    if unknown:
        raise HuggingGPTError(f"unknown graph type(s) {', '.join(unknown)} (choose from {', '.join(GRAPH_TYPES)})")
    return types
