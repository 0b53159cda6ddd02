"""Stage 1, task planning, as one straight line: the prompt (``prompt.py``, with ``demonstrations.py``)
is answered by the LLM (``planner.py``), the answer is read into a plan (``parse.py``), and the plan
goes through the passes (``passes.py``: the validity and preference passes, in order) before it runs.
``model.py`` holds the plan as data, ``context.py`` what passes may read besides it.
"""

from __future__ import annotations

from hugginggpt.agent.plan.model import (
    CANONICAL_REF,
    MAX_TASKS,
    RESOURCE_REF,
    Plan,
    PlanTask,
    Repair,
    canonical_refs,
    describe_tools,
    media_read,
    refs_in,
    replace_refs,
    whole_ref,
)
from hugginggpt.agent.plan.passes import PASSES, PlanPass, run_passes, validate_plan
from hugginggpt.agent.plan.planner import Planner, PlanResult

__all__ = [
    "CANONICAL_REF", "MAX_TASKS", "PASSES", "RESOURCE_REF", "Plan", "PlanPass", "PlanResult", "PlanTask", "Planner",
    "Repair", "canonical_refs", "describe_tools", "media_read", "refs_in", "replace_refs",
    "run_passes", "validate_plan", "whole_ref",
]
