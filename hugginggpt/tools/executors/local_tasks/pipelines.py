"""Loading a transformers pipeline from a local folder (the loader most handlers share)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hugginggpt.tools.executors.local_tasks.common import LoadOptions, TaskHandler


def pipeline_loader(pipeline_task: str) -> Callable[[Path, LoadOptions], Any]:
    """A loader that builds ``transformers.pipeline(pipeline_task)`` from a folder, never the Hub."""

    def load(folder: Path, options: LoadOptions) -> Any:
        from transformers import pipeline

        return pipeline(pipeline_task, model=str(folder), device=options.device, dtype=options.dtype)

    load.__name__ = f"load_{pipeline_task.replace('-', '_')}_pipeline"
    return load


def pipeline_handler(pipeline_task: str, infer: Callable[[Any, Any], dict[str, Any]]) -> TaskHandler:
    """A task run by ``infer`` on the ``pipeline_task`` pipeline; tasks on the same pipeline share one
    loaded model per folder (the pipeline task is the loader key)."""
    return TaskHandler(pipeline_task, pipeline_loader(pipeline_task), infer)
