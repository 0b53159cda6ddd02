"""TaskBench evaluation: load a domain, map its tools to our tasks, score plans, compare agents."""

from hugginggpt.eval.mapping import TaskBenchMapping, hub_name
from hugginggpt.eval.scoring import (
    METRICS,
    GroupScore,
    load_predictions,
    score,
    score_files,
)
from hugginggpt.eval.taskbench import TaskBenchDataset, TaskBenchSample, load_taskbench

__all__ = [
    "METRICS",
    "GroupScore",
    "TaskBenchDataset",
    "TaskBenchMapping",
    "TaskBenchSample",
    "hub_name",
    "load_predictions",
    "load_taskbench",
    "score",
    "score_files",
]
