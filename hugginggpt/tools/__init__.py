"""Hugging Face tasks as LangChain tools, all generated from one task table (``tasks.yaml``)."""

from __future__ import annotations

from hugginggpt.lazy import lazy_attributes
from hugginggpt.tools.results import envelope, resource_value, summarize
from hugginggpt.tools.schemas import args_model, plan_json_schema
from hugginggpt.tools.table import (
    ArgSpec,
    TaskSpec,
    get_task,
    non_tool_tasks,
    task_table,
)

# Written in their own modules (some heavy to import): loaded on first use.
_LAZY = {
    "build_tools": "hugginggpt.tools.factory",
    "Workspace": "hugginggpt.tools.resources",
    "ModelCatalog": "hugginggpt.tools.catalog",
    "default_executor": "hugginggpt.tools.executors",
}

__all__ = [
    "ArgSpec",
    "TaskSpec",
    "task_table",
    "get_task",
    "non_tool_tasks",
    "args_model",
    "plan_json_schema",
    "resource_value",
    "envelope",
    "summarize",
    *_LAZY,
]

__getattr__ = lazy_attributes(__name__, globals(), _LAZY)
