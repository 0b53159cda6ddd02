"""Run several agents on TaskBench requests with one LLM, and score and compare their plans.

Two modes. ``plan``: no model runs; the global-plan agent only plans (``aplan``), and the tool-loop
agents (ReAct, function calling) get stand-in tools that record each call and return a placeholder
of the task's output kinds (a unique file path for images, audio and video; a unique text), so
their loop continues as it would. ``full``: the agents run for real, with the real tools.

Per agent, predictions go to ``<out>/predictions/<agent>.json`` in TaskBench's format (one JSON
line per request, plus a ``harness`` entry with time, LLM calls, tokens and error). A re-run skips
requests already there, so an interrupted comparison resumes where it stopped.

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
import csv
import inspect
import itertools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from langchain_core.tools import StructuredTool

from hugginggpt.agent.trace import UsageCounter
from hugginggpt.errors import HuggingGPTError
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.peers import PEER_NAMES
from hugginggpt.eval.scoring import METRICS, GroupScore, load_predictions, score
from hugginggpt.eval.taskbench import GRAPH_TYPES, TaskBenchDataset, TaskBenchSample
from hugginggpt.tools.resources.sniff import KIND_SUFFIX
from hugginggpt.tools.table import MEDIA_KINDS

AGENT_NAMES = ("global", "react", "tools")
#: ours, then the ecosystem's agents (eval/peers.py, the ``peers`` extra; planning-only mode)
ALL_AGENT_NAMES = (*AGENT_NAMES, *PEER_NAMES)
MODES = ("plan", "full")
TOOL_SETS = ("domain", "all")
_EXTENSIONS = {kind: KIND_SUFFIX[kind] for kind in MEDIA_KINDS}  # the one list: tools/resources/sniff.py

AgentFactory = Callable[..., Any]  # (llm, mode, workspace root, tasks=None) -> agent


# ----- stand-in tools for planning-only runs -----

def placeholder_tools(tasks: Iterable[str] | None = None, root: str | Path = ".") -> list[StructuredTool]:
    """One tool per task with the task's real name, description and argument schema, that runs
    nothing: it returns a unique placeholder of each output kind the task produces."""
    from hugginggpt.tools import args_model, task_table
    from hugginggpt.tools.factory import tool_description

    table = task_table()
    specs = [table[name] for name in tasks] if tasks is not None else list(table.values())
    counter = itertools.count(1)
    folder = Path(root).absolute() / "placeholders"

    def make(spec: Any) -> StructuredTool:
        def run(**_: Any) -> dict[str, Any]:
            n = next(counter)
            result: dict[str, Any] = {}
            for kind in spec.outputs:
                if kind in _EXTENSIONS:
                    result[kind] = str(folder / f"{spec.name}-{n}{_EXTENSIONS[kind]}")
                elif kind == "text":
                    result["text"] = f"(output {n} of {spec.name})"
                elif kind == "data":
                    result["data"] = {"placeholder": n}
            return result

        return StructuredTool(name=spec.name, description=tool_description(spec), args_schema=args_model(spec),
                              func=run, metadata={"task": spec.name, "placeholder": True})

    return [make(spec) for spec in specs]


# ----- agents -----

def build_agent(name: str, llm: Any, mode: str, root: Path, tasks: Sequence[str] | None = None) -> Any:
    """The agent called ``name`` (global | react | tools, or a peer of eval/peers.py) for ``mode``, on
    ``llm``, offered ``tasks`` (None: every task of the table)."""
    from hugginggpt import agent as agents

    if name in PEER_NAMES:
        from hugginggpt.eval.peers import build_peer

        if mode != "plan":
            raise HuggingGPTError(f"agent {name} is compared in --mode plan only")
        return build_peer(name, llm, mode, placeholder_tools(tasks, root=root))
    classes = {"global": "GlobalPlanAgent", "react": "ReActAgent", "tools": "FunctionCallingAgent"}
    if name not in classes:
        raise HuggingGPTError(f"unknown agent {name!r} (choose from {', '.join(ALL_AGENT_NAMES)})")
    cls = getattr(agents, classes[name])
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


async def run_request(agent: Any, request: str, mode: str) -> dict[str, Any]:
    """Run one request; the plan, time, usage and error (an error is recorded, not raised)."""
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
            result = await (aplan(request, config=config) if accepts_config else aplan(request))
        else:
            result = await agent.ainvoke({"input": request, "chat_history": []}, config=config)
        plan = plan_list(result)
        # the planner's raw answers and repairs, when it reports them: plans can be re-validated offline
        extra = {key: getattr(result, key) for key in ("raw_outputs", "repairs") if hasattr(result, key)}
        if isinstance(result, Mapping) and "parse_errors" in result:  # a peer: its own account of the run
            extra.update({key: result[key] for key in ("raw_outputs", "parse_errors") if key in result})
            error = result.get("error") or None
        elif isinstance(result, Mapping) and result.get("trace"):  # ours: the unreadable turns its trace records
            extra["parse_errors"] = trace_parse_errors(result["trace"])
    except Exception as exc:  # one failing request must not stop a comparison
        error = f"{type(exc).__name__}: {exc}"
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


# ----- the comparison -----

@dataclass
class AgentReport:
    """What one agent did over the chosen requests."""

    agent: str
    scores: dict[str, GroupScore]
    rows: list[dict[str, Any]]  # prediction rows with their ``harness`` entry
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> critic verdict
    gold: dict[str, list[str]] = field(default_factory=dict)  # id -> ground-truth tool names

    @property
    def failures(self) -> int:
        """Requests that failed (raised, looped, ran out of a limit) for another reason than a parse failure."""
        return sum(1 for row in self.rows if failed(row))

    @property
    def parse_failures(self) -> int:
        """Requests where some answer of the model could not be read (a peer's planner JSON, tool call, code)."""
        return sum(1 for row in self.rows if parse_failed(row))

    def mean(self, key: str, rows: Sequence[dict[str, Any]] | None = None) -> float:
        rows = self.rows if rows is None else rows
        return sum(row["harness"].get(key) or 0 for row in rows) / len(rows) if rows else 0.0

    def by_type(self, graph_type: str) -> list[dict[str, Any]]:
        return [row for row in self.rows if row["harness"].get("type") == graph_type]

    def critic(self, rows: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Critic pass rate (yes / verdicts given), the number judged and the no-verdict count."""
        rows = self.rows if rows is None else rows
        judged = [self.verdicts[r["id"]] for r in rows if r["id"] in self.verdicts]
        choices = [v.get("choice") for v in judged]
        given = [c for c in choices if c in ("yes", "no")]
        return {"critic_pass_rate": given.count("yes") / len(given) if given else None,
                "critic_judged": len(judged), "critic_no_verdict": len(judged) - len(given)}

    def single_task_accuracy(self, rows: Sequence[dict[str, Any]] | None = None) -> float | None:
        """Exact task match on single-tool requests (the paper's single-task accuracy); None without any."""
        rows = self.rows if rows is None else rows
        singles = [r for r in rows if r["harness"].get("type") == "single" and r["id"] in self.gold]
        if not singles:
            return None
        hits = sum(1 for r in singles if exact_tasks(r) == self.gold[r["id"]])
        return hits / len(singles)

    def summary(self) -> dict[str, Any]:
        overall = self.scores["overall_overall"]
        return {
            "agent": self.agent,
            "requests": len(self.rows),
            **{m: getattr(overall, m) for m in METRICS},
            "single_task_accuracy": self.single_task_accuracy(),
            **(self.critic() if self.verdicts else {}),
            "critic_by_type": {t: self.critic(self.by_type(t)) for t in GRAPH_TYPES} if self.verdicts else None,
            "median_seconds": _median([r["harness"].get("seconds") or 0 for r in self.rows]),
            "llm_calls": self.mean("llm_calls"),
            "prompt_tokens": self.mean("prompt_tokens"),
            "completion_tokens": self.mean("completion_tokens"),
            "seconds": self.mean("seconds"),
            "failures": self.failures,
            "parse_failures": self.parse_failures,
        }


@dataclass
class Comparison:
    """Runs agents on a dataset's requests and writes predictions, tables and plots to ``out``."""

    dataset: TaskBenchDataset
    llm: Any
    out: Path
    agents: Sequence[str] = AGENT_NAMES
    mode: str = "plan"
    factory: AgentFactory = build_agent
    mapping: TaskBenchMapping | None = None
    progress: bool = True
    tools: str = "domain"
    critic: Any = None  # an LLM judging each plan, or None
    reports: dict[str, AgentReport] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise HuggingGPTError(f"unknown mode {self.mode!r} (choose plan or full)")
        if self.tools not in TOOL_SETS:
            raise HuggingGPTError(f"--tools: unknown tool set {self.tools!r} (choose domain or all)")
        self.out = Path(self.out)
        self.mapping = self.mapping or TaskBenchMapping(self.dataset.tools)

    def offered_tasks(self) -> list[str] | None:
        """The tasks each agent is offered: the domain's (mapped), or None for the whole table."""
        if self.tools == "all":
            return None
        tasks = self.mapping.domain_tasks()
        if not tasks:
            raise HuggingGPTError("--tools domain: none of the dataset's tools maps to a task of the table")
        return tasks

    def predictions_path(self, agent: str) -> Path:
        return self.out / "predictions" / f"{agent}.json"

    def critic_path(self, agent: str) -> Path:
        return self.out / "predictions" / f"{agent}.critic.json"

    async def arun(self, samples: Sequence[TaskBenchSample]) -> dict[str, AgentReport]:
        tasks = self.offered_tasks()
        for name in self.agents:
            agent = self.factory(name, self.llm, self.mode, self.out / name, tasks=tasks)
            await self._run_agent(name, agent, samples)
            if self.critic is not None:
                await self._judge(name, samples, tasks)
            self.reports[name] = self._report(name, samples)
        self.write_tables()
        return self.reports

    def run(self, samples: Sequence[TaskBenchSample]) -> dict[str, AgentReport]:
        return asyncio.run(self.arun(samples))

    async def _run_agent(self, name: str, agent: Any, samples: Sequence[TaskBenchSample]) -> None:
        path = self.predictions_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        done = set(load_predictions(path)) if path.is_file() else set()
        todo = [s for s in samples if s.id not in done]
        bar = _progress_bar(len(todo), f"{name} ({self.mode})", enabled=self.progress)
        try:
            with path.open("a", encoding="utf-8") as fh:
                for sample in todo:
                    outcome = await run_request(agent, sample.request, self.mode)
                    plan = outcome.pop("plan")
                    row = self.mapping.plan_to_prediction(sample.id, plan)
                    row["harness"] = {"agent": name, "mode": self.mode, "tools": self.tools, "type": sample.type,
                                      "n_tools": len(sample.nodes), **outcome, "plan": plan}
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                    fh.flush()  # a crash or Ctrl-C loses at most the request in flight
                    bar.update(1)
        finally:
            bar.close()

    async def _judge(self, name: str, samples: Sequence[TaskBenchSample], tasks: list[str] | None) -> None:
        """Critic verdicts for this agent's plans that have none yet (appended, resumable)."""
        from hugginggpt.agent.critic import ajudge_plan
        from hugginggpt.llm.structured import ConstrainedCache

        predictions = load_predictions(self.predictions_path(name))
        path = self.critic_path(name)
        done = set(load_predictions(path)) if path.is_file() else set()
        todo = [s for s in samples if s.id in predictions and s.id not in done]
        specs = _task_specs(tasks)
        cache = ConstrainedCache(self.critic, "auto")
        bar = _progress_bar(len(todo), f"{name} (critic)", enabled=self.progress)
        try:
            with path.open("a", encoding="utf-8") as fh:
                for sample in todo:
                    verdict = await ajudge_plan(self.critic, sample.request, judged_plan(predictions[sample.id]),
                                                specs, constrained=cache)
                    fh.write(json.dumps({"id": sample.id, **verdict.as_dict()}, ensure_ascii=False) + "\n")
                    fh.flush()
                    bar.update(1)
        finally:
            bar.close()

    def _report(self, name: str, samples: Sequence[TaskBenchSample]) -> AgentReport:
        wanted = {s.id for s in samples}
        predictions = {i: row for i, row in load_predictions(self.predictions_path(name)).items() if i in wanted}
        labels = [r for r in self.dataset.records if r["id"] in predictions]
        scores = score(labels, predictions, list(self.dataset.tools.values()))
        rows = [predictions[s.id] for s in samples if s.id in predictions]
        for row in rows:
            row.setdefault("harness", {})
        path = self.critic_path(name)
        verdicts = {i: v for i, v in load_predictions(path).items() if i in wanted} if path.is_file() else {}
        gold = {s.id: [n["task"] for n in s.nodes] for s in samples}
        return AgentReport(name, scores, rows, verdicts, gold)

    # ----- outputs -----

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per agent and group (overall, by graph type, by number of tools) with samples."""
        rows = []
        for name, report in self.reports.items():
            for group, s in report.scores.items():
                if not s.supports:
                    continue
                split, n_tools = group.split("_", 1)
                chosen = report.rows if split == "overall" else report.by_type(split)
                if n_tools != "overall":
                    chosen = [r for r in chosen if r["harness"].get("n_tools") == int(n_tools)]
                critic = report.critic(chosen) if report.verdicts else {}
                rows.append({"agent": name, "group": group, "samples": s.supports,
                             **{m: _round(getattr(s, m)) for m in METRICS},
                             "single_task_accuracy": _round(report.single_task_accuracy(chosen)),
                             "critic_pass_rate": _round(critic.get("critic_pass_rate")),
                             "critic_no_verdict": critic.get("critic_no_verdict"),
                             "llm_calls": _round(report.mean("llm_calls", chosen)),
                             "prompt_tokens": _round(report.mean("prompt_tokens", chosen)),
                             "completion_tokens": _round(report.mean("completion_tokens", chosen)),
                             "seconds": _round(report.mean("seconds", chosen)),
                             "median_seconds": _round(_median([r["harness"].get("seconds") or 0 for r in chosen])),
                             "failures": sum(1 for r in chosen if failed(r)),
                             "parse_failures": sum(1 for r in chosen if parse_failed(r))})
        return rows

    def write_tables(self) -> dict[str, Path]:
        """``metrics.csv``, ``metrics.md`` and ``summary.json`` in ``out``; returns their paths."""
        self.out.mkdir(parents=True, exist_ok=True)
        rows = self.table_rows()
        paths = {"csv": self.out / "metrics.csv", "md": self.out / "metrics.md", "json": self.out / "summary.json"}
        columns = list(rows[0]) if rows else ["agent", "group", "samples", *METRICS]
        with paths["csv"].open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
        paths["md"].write_text(markdown_table(rows, columns), encoding="utf-8")
        summary = {name: report.summary() for name, report in self.reports.items()}
        paths["json"].write_text(json.dumps({"mode": self.mode, "tools": self.tools, "agents": summary}, indent=2),
                                 encoding="utf-8")
        return paths


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join("" if row.get(c) is None else str(row.get(c)) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def parse_failed(row: Mapping[str, Any]) -> bool:
    """Whether some model answer of the request could not be read (counted apart from failures)."""
    return bool((row.get("harness") or {}).get("parse_errors"))


def failed(row: Mapping[str, Any]) -> bool:
    """Whether the request failed for another reason than a parse failure."""
    return bool((row.get("harness") or {}).get("error")) and not parse_failed(row)


def exact_tasks(row: Mapping[str, Any]) -> list[str]:
    """The tool names of a prediction row, in order."""
    return [str(node.get("task")) for node in (row.get("result") or {}).get("task_nodes") or []
            if isinstance(node, Mapping)]


def judged_plan(row: Mapping[str, Any]) -> list[Any]:
    """What the critic sees of a prediction: the agent's own plan when recorded, else TaskBench's nodes."""
    plan = (row.get("harness") or {}).get("plan")
    if isinstance(plan, list):
        return plan
    return [{"task": node.get("task"), "id": i, "args": node.get("arguments")}
            for i, node in enumerate((row.get("result") or {}).get("task_nodes") or []) if isinstance(node, Mapping)]


def _task_specs(tasks: Sequence[str] | None) -> dict[str, Any]:
    from hugginggpt.tools.table import task_table

    table = task_table()
    return {name: table[name] for name in (tasks if tasks is not None else table)}


def _median(values: Sequence[float]) -> float | None:
    import statistics

    return statistics.median(values) if values else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _progress_bar(total: int, label: str, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=label, unit="req", disable=not enabled or None)


def selected_types(text: str | None) -> list[str]:
    """``"single,dag"`` -> ["single", "dag"], checked against TaskBench's graph types."""
    types = [t.strip() for t in (text or ",".join(GRAPH_TYPES)).split(",") if t.strip()]
    unknown = [t for t in types if t not in GRAPH_TYPES]
    if unknown:
        raise HuggingGPTError(f"unknown graph type(s) {', '.join(unknown)} (choose from {', '.join(GRAPH_TYPES)})")
    return types
