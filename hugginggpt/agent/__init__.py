"""The agents: GlobalPlanAgent (HuggingGPT's plan-then-execute), ReActAgent, FunctionCallingAgent."""

from __future__ import annotations

from hugginggpt.agent.global_plan import GlobalPlanAgent
from hugginggpt.agent.plan.planner import PlanResult
from hugginggpt.lazy import lazy_attributes

# Agents written in their own modules; imported on first use so one missing module breaks no other.
_LAZY = {
    "ReActAgent": "hugginggpt.agent.react",
    "FunctionCallingAgent": "hugginggpt.agent.function_calling",
}

__all__ = ["GlobalPlanAgent", "PlanResult", *_LAZY]

__getattr__ = lazy_attributes(__name__, globals(), _LAZY)
