"""The agents: GlobalPlanAgent (HuggingGPT's plan-then-execute), ReActAgent, FunctionCallingAgent."""

from __future__ import annotations

from hugginggpt.config import AGENT_CLASSES
from hugginggpt.lazy import lazy_attributes

# Agents written in their own modules (the registry: config.AGENT_CLASSES); imported on first use, so one
# missing module breaks no other and a leaf such as ``hugginggpt.agent.events`` loads alone.
_LAZY = {
    **{class_name: module for module, class_name in AGENT_CLASSES.values()},
    "PlanResult": "hugginggpt.agent.plan.planner",
}

__all__ = [*_LAZY]

__getattr__ = lazy_attributes(__name__, globals(), _LAZY)
