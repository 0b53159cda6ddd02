"""Executors run one task call on one model: locally (transformers), remotely (Hugging Face inference), or by policy.

``LocalExecutor`` is imported on first use: its module pulls in the local task handlers, which the
remote-only setup does not need.
"""

from __future__ import annotations

from typing import Any

from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.executors.hybrid import POLICIES, HybridExecutor, default_executor
from hugginggpt.tools.executors.remote import RemoteExecutor

__all__ = ["Executor", "TaskCall", "LocalExecutor", "RemoteExecutor", "HybridExecutor", "POLICIES",
           "default_executor"]


def __getattr__(name: str) -> Any:
    if name == "LocalExecutor":
        from hugginggpt.tools.executors.local import LocalExecutor

        globals()[name] = LocalExecutor
        return LocalExecutor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
