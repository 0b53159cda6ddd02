"""The agents: GlobalPlanAgent (HuggingGPT's plan-then-execute), ReActAgent, FunctionCallingAgent."""

from __future__ import annotations

from hugginggpt.lazy import lazy_attributes

# Agents written in their own modules; imported on first use, so one missing module breaks no other and
# a leaf such as ``hugginggpt.agent.events`` loads alone.
_LAZY = {
    "GlobalPlanAgent": "hugginggpt.agent.global_plan",
    "PlanResult": "hugginggpt.agent.plan.planner",
    "ReActAgent": "hugginggpt.agent.react",
    "FunctionCallingAgent": "hugginggpt.agent.function_calling",
}

__all__ = [*_LAZY]

__getattr__ = lazy_attributes(__name__, globals(), _LAZY)
