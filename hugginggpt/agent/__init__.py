"""The agents: GlobalPlanAgent (HuggingGPT's plan-then-execute), ReActAgent, FunctionCallingAgent."""

from __future__ import annotations

import importlib
from typing import Any

from hugginggpt.agent.global_plan import GlobalPlanAgent
from hugginggpt.agent.planning import PlanResult

# Agents written in their own modules; imported on first use so one missing module breaks no other.
_LAZY = {
    "ReActAgent": "hugginggpt.agent.react",
    "FunctionCallingAgent": "hugginggpt.agent.function_calling",
}

__all__ = ["GlobalPlanAgent", "PlanResult", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
