"""Executors run one task call on one model: locally (transformers), remotely (Hugging Face inference), or by policy.

``LocalExecutor`` is imported on first use: its module pulls in the local task handlers, which the
remote-only setup does not need.
"""

from __future__ import annotations

from hugginggpt.lazy import lazy_attributes
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.executors.hybrid import POLICIES, HybridExecutor, default_executor
from hugginggpt.tools.executors.remote import RemoteExecutor

__all__ = ["Executor", "TaskCall", "LocalExecutor", "RemoteExecutor", "HybridExecutor", "POLICIES",
           "default_executor"]

__getattr__ = lazy_attributes(__name__, globals(), {"LocalExecutor": "hugginggpt.tools.executors.local"})
