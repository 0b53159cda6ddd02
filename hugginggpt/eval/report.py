"""The report of a comparison: per agent, TaskBench's metrics with bootstrap confidence intervals over
requests, and the harness's figures (LLM calls, tokens, seconds, failures, the critic's pass rate),
written as ``metrics.csv``, ``metrics.md`` (every group), ``overview.md`` (one row per agent) and
``summary.json`` (the plots: ``eval/plots.py``).

A report is read from a comparison's folder only: ``predictions/<agent>.json`` (and ``.critic.json``)
for the requests named, in their order. So it depends on what the agents predicted, not on how the
requests ran: the same whatever the concurrency, the order requests finished in, or the number of
shards whose folders were merged (``eval/shards.py``). Only the recorded seconds differ between runs.

Intervals are percentile bootstrap intervals: the requests of a group are drawn with replacement
``RESAMPLES`` times (a fixed seed, so a report is reproducible) and each metric is computed on every
draw as TaskBench computes it on the whole group.
"""

from __future__ import annotations

import csv
import json
import random
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from hugginggpt.eval.scoring import (
    METRICS,
    GroupScore,
    group_names,
    group_rows,
    group_score,
    load_predictions,
    read_graphs,
)
from hugginggpt.eval.taskbench import GRAPH_TYPES, TaskBenchDataset

#: draws of the bootstrap, its confidence level and seed
RESAMPLES = 1000
LEVEL = 0.95
SEED = 0
#: the metrics of the one-row-per-agent table, with their column titles
OVERVIEW_METRICS = {"node_f1": "n-F1", "edge_f1": "e-F1", "v_f1": "v-F1"}

Interval = tuple[float, float]


def predictions_path(out: Path, agent: str) -> Path:
    return Path(out) / "predictions" / f"{agent}.json"


def critic_path(out: Path, agent: str) -> Path:
    return Path(out) / "predictions" / f"{agent}.critic.json"


@dataclass
class AgentReport:
    """What one agent did over the chosen requests."""

    agent: str
    scores: dict[str, GroupScore]
    rows: list[dict[str, Any]]  # prediction rows with their ``harness`` entry, in the requests' order
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> critic verdict
    gold: dict[str, list[str]] = field(default_factory=dict)  # id -> ground-truth tool names
    intervals: dict[str, dict[str, Interval]] = field(default_factory=dict)  # group -> metric -> (low, high)

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
            "scored": overall.supports,
            **{m: getattr(overall, m) for m in METRICS},
            "intervals": {m: list(i) for m, i in self.intervals.get("overall_overall", {}).items()},
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


def agent_report(dataset: TaskBenchDataset, out: Path, agent: str, ids: Sequence[str],
                 resamples: int = RESAMPLES) -> AgentReport:
    """The report of ``agent`` over the requests ``ids`` (in this order) from the folder ``out``."""
    wanted = set(ids)
    predictions = {i: row for i, row in load_predictions(predictions_path(out, agent)).items() if i in wanted}
    labels = [r for r in dataset.records if r["id"] in predictions]
    tools = list(dataset.tools.values())
    scores, intervals = {}, {}
    for group in group_names():
        graphs = read_graphs(group_rows(labels, group), predictions, tools)
        scores[group] = group_score(graphs, tools)
        if scores[group].supports:
            intervals[group] = bootstrap(graphs, tools, resamples)
    rows = [predictions[i] for i in ids if i in predictions]
    for row in rows:
        row.setdefault("harness", {})
    path = critic_path(out, agent)
    verdicts = {i: v for i, v in load_predictions(path).items() if i in wanted} if path.is_file() else {}
    gold = {i: [n["task"] for n in dataset.get(i).nodes] for i in ids}
    return AgentReport(agent, scores, rows, verdicts, gold, intervals)


def build_report(dataset: TaskBenchDataset, out: Path, agents: Sequence[str], ids: Sequence[str], mode: str,
                 tools: str, notes: Sequence[str] = (), resamples: int = RESAMPLES) -> Report:
    """The report of ``agents`` over the requests ``ids`` from the comparison folder ``out``."""
    reports = {name: agent_report(dataset, out, name, ids, resamples) for name in agents}
    return Report(Path(out), mode, tools, reports, list(notes))


def bootstrap(graphs: Sequence[Any], tools: Sequence[Mapping[str, Any]], resamples: int = RESAMPLES,
              level: float = LEVEL, seed: int = SEED) -> dict[str, Interval]:
    """Per metric, the percentile interval of its value over ``resamples`` draws of the requests with
    replacement (``graphs``: ``scoring.read_graphs``); {} for fewer than two requests or no draws."""
    if len(graphs) < 2 or resamples < 1:
        return {}
    rng = random.Random(seed)
    n = len(graphs)
    drawn: dict[str, list[float]] = {m: [] for m in METRICS}
    for _ in range(resamples):
        score = group_score([graphs[rng.randrange(n)] for _ in range(n)], tools)
        for metric in METRICS:
            value = getattr(score, metric)
            if value is not None:
                drawn[metric].append(value)
    tail = (1 - level) / 2
    return {m: (_quantile(values, tail), _quantile(values, 1 - tail)) for m, values in drawn.items() if values}


def _quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile with linear interpolation between order statistics (numpy's default)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class Report:
    """A comparison's report: its agents' reports and how they ran (``mode``, ``tools``, ``notes``)."""

    out: Path
    mode: str
    tools: str
    reports: dict[str, AgentReport]
    notes: list[str] = field(default_factory=list)  # lines shown above the tables (e.g. serialised requests)

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
                intervals = report.intervals.get(group, {})
                rows.append({"agent": name, "group": group, "samples": s.supports,
                             **{m: _round(getattr(s, m)) for m in METRICS},
                             **{f"{m}_{end}": _round(intervals[m][k]) if m in intervals else None
                                for m in METRICS for k, end in enumerate(("low", "high"))},
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

    def overview_rows(self) -> list[dict[str, str]]:
        """One row per agent: requests scored, the main metrics with their intervals, LLM calls, the
        median seconds, failures and parse failures (the table a reader compares agents by)."""
        rows = []
        for name, report in self.reports.items():
            overall = report.scores["overall_overall"]
            intervals = report.intervals.get("overall_overall", {})
            s = report.summary()
            rows.append({"agent": name, "n": f"{overall.supports}/{len(report.rows)}",
                         **{title: with_interval(getattr(overall, m), intervals.get(m))
                            for m, title in OVERVIEW_METRICS.items()},
                         "LLM calls": f"{s['llm_calls']:.1f}",
                         "median s": "" if s["median_seconds"] is None else f"{s['median_seconds']:.1f}",
                         "failures": str(s["failures"]), "parse failures": str(s["parse_failures"])})
        return rows

    def header(self) -> str:
        """What the tables are: mode, tools offered, the interval's meaning, and the notes."""
        lines = [f"Mode `{self.mode}`, tools `{self.tools}`. Metrics with their {LEVEL:.0%} bootstrap interval "
                 f"over requests ({RESAMPLES} draws); n = requests scored / requests run."]
        return "\n".join([*lines, *(f"Note: {note}" for note in self.notes)]) + "\n\n"

    def write_tables(self) -> dict[str, Path]:
        """``metrics.csv``, ``metrics.md``, ``overview.md`` and ``summary.json`` in ``out``; their paths."""
        self.out.mkdir(parents=True, exist_ok=True)
        rows = self.table_rows()
        paths = {"csv": self.out / "metrics.csv", "md": self.out / "metrics.md",
                 "overview": self.out / "overview.md", "json": self.out / "summary.json"}
        columns = list(rows[0]) if rows else ["agent", "group", "samples", *METRICS]
        with paths["csv"].open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
        paths["md"].write_text(self.header() + markdown_table(rows, columns), encoding="utf-8")
        overview = self.overview_rows()
        paths["overview"].write_text(self.header() + markdown_table(overview, list(overview[0]) if overview else []),
                                     encoding="utf-8")
        summary = {name: report.summary() for name, report in self.reports.items()}
        paths["json"].write_text(json.dumps({"mode": self.mode, "tools": self.tools, "notes": self.notes,
                                             "confidence": LEVEL, "resamples": RESAMPLES, "agents": summary},
                                            indent=2), encoding="utf-8")
        return paths


def with_interval(value: float | None, interval: Interval | None) -> str:
    """``0.803 [0.712, 0.881]``; the value alone without an interval, ``-`` without a value."""
    if value is None:
        return "-"
    return f"{value:.3f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")


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


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
