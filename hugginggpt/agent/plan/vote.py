"""A vote among several plans drawn for one request (self-consistency, Wang et al. 2022).

Plans agree when they hold the same tasks (by name, counted) joined the same way (the names at both ends of
each ``<resource>-N`` reference): ids, argument texts and the step words may differ. The plan most draws
agree on wins, when at least two agree and no other plan has as many; otherwise the first draw stands. Ties
and lone draws keep the first, so a vote changes a plan only on the word of a majority.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence

from hugginggpt.agent.plan.model import Plan


def plan_shape(plan: Plan) -> Hashable:
    """What two plans must share to agree: their task names (counted) and the names along their edges."""
    names = {task.id: task.task for task in plan.tasks}
    edges = sorted((names.get(ref, "?"), task.task) for task in plan.tasks for ref in task.references())
    return tuple(sorted(names.values())), tuple(edges)


def winner(plans: Sequence[Plan]) -> int:
    """The index of the plan a vote keeps: the first of the plans most of ``plans`` agree on, when at least two
    agree and no other shape has as many; else 0 (the first draw)."""
    shapes = [plan_shape(plan) for plan in plans]
    ranked = Counter(shapes).most_common()
    if not ranked:
        raise ValueError("a vote needs at least one plan")
    top, count = ranked[0]
    if count < 2 or (len(ranked) > 1 and ranked[1][1] == count):
        return 0
    return shapes.index(top)


def settled(plans: Sequence[Plan], left: int) -> bool:
    """Whether ``left`` more draws cannot change the vote among ``plans`` (the usable plans so far): the
    leading shape has more than the runner-up plus every draw left."""
    if left <= 0:
        return True
    counts = Counter(plan_shape(plan) for plan in plans).most_common()
    if not counts:
        return False
    runner_up = counts[1][1] if len(counts) > 1 else 0
    return counts[0][1] > runner_up + left
