"""Plots of a comparison (matplotlib, Agg backend, PNG): metric bars, latency and LLM calls by graph type."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from hugginggpt.eval.scoring import METRICS
from hugginggpt.eval.taskbench import GRAPH_TYPES

if TYPE_CHECKING:
    from hugginggpt.eval.report import Report

_LABELS = {"node_f1": "n-F1", "node_f1_macro": "n-F1 macro", "edge_f1": "e-F1", "t_f1": "t-F1", "v_f1": "v-F1",
           "ned": "NED (lower is better)"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    return plt


def grouped_bars(path: Path, title: str, groups: Sequence[str], series: dict[str, Sequence[float]],
                 ylabel: str) -> Path:
    """One cluster of bars per group, one bar per series (agent)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(groups) * max(1, len(series)) / 2), 4))
    width = 0.8 / max(1, len(series))
    for i, (name, values) in enumerate(series.items()):
        xs = [g + i * width - 0.4 + width / 2 for g in range(len(groups))]
        ax.bar(xs, values, width, label=name)
    ax.set_xticks(range(len(groups)), list(groups))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_plots(comparison: "Report") -> dict[str, Path]:
    """``metrics.png``, ``latency.png`` and ``llm_calls.png`` in the comparison's folder (a ``Report``, or
    a ``Comparison`` that has run: anything with ``reports``, ``out`` and ``mode``)."""
    reports = comparison.reports
    out = comparison.out
    metrics = {name: [getattr(r.scores["overall_overall"], m) or 0.0 for m in METRICS] for name, r in reports.items()}
    types = [t for t in GRAPH_TYPES if any(r.by_type(t) for r in reports.values())]
    latency = {name: [r.mean("seconds", r.by_type(t)) for t in types] for name, r in reports.items()}
    calls = {name: [r.mean("llm_calls", r.by_type(t)) for t in types] for name, r in reports.items()}
    return {
        "metrics": grouped_bars(out / "metrics.png", f"TaskBench metrics ({comparison.mode})",
                                [_LABELS[m] for m in METRICS], metrics, "score"),
        "latency": grouped_bars(out / "latency.png", "Wall time per request", types, latency, "seconds"),
        "llm_calls": grouped_bars(out / "llm_calls.png", "LLM calls per request", types, calls, "calls"),
    }
