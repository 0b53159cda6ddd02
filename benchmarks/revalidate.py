"""Re-validate recorded planner answers offline and score them: the effect of a repair without LLM calls.

``hugginggpt compare`` records each global-plan answer (``harness.raw_outputs``) next to its
prediction, and ``benchmarks/planning_quality.py`` in its rows (``harness.raw``). This script parses
the last answer again, validates it with every repair and then without each switchable one in turn
(``relink``: ``plan_repair.relink_skipped_steps``; ``unrequested``: ``agent/unrequested.py``;
``swaps`` and ``drawing``: ``agent/task_swaps.py``'s two; ``writing``: ``unrequested.splice_unrequested_writing``),
converts each to TaskBench's format and scores them, so a repair is measured on exactly the same
LLM answers.

    python benchmarks/revalidate.py docs/results/taskbench-test-qwen2.5-coder-1.5b/predictions/global.json
    python benchmarks/revalidate.py benchmarks/results/planning_quality-dev.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hugginggpt.agent import plan_repair
from hugginggpt.agent.plan import task_info_from_spec
from hugginggpt.agent.plan_format import parse_plan_text
from hugginggpt.errors import PlanError
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.scoring import METRICS, load_predictions, score
from hugginggpt.eval.taskbench import load_taskbench
from hugginggpt.tools.table import task_table
from tests.shared import shared_path

GROUPS = ["overall_overall", "single_overall", "chain_overall", "dag_overall"]
#: The repairs that can be switched off, and what switching one off replaces in ``plan_repair``.
SWITCHABLE = {
    "relink": ("relink_skipped_steps", lambda *args: None),
    "unrequested": ("drop_unrequested_leaves", lambda items, *args: items),
    "swaps": ("swap_misread_tasks", lambda *args: None),
    "drawing": ("swap_misnamed_writing", lambda *args: None),
    "writing": ("splice_unrequested_writing", lambda items, *args: items),
}


def replan(rows: dict[str, Any], dataset: Any, mapping: TaskBenchMapping, without: str | None) -> dict[str, Any]:
    table = task_table()
    known = {n: task_info_from_spec(table[n]) for n in mapping.domain_tasks()}
    name, stand_in = SWITCHABLE[without] if without else (None, None)
    out = {}
    for sample_id, row in rows.items():
        harness = row.get("harness") or {}
        raw = harness.get("raw_outputs") or harness.get("raw") or []
        plan: list[dict[str, Any]] = []
        if raw:
            try:
                with mock.patch.object(plan_repair, name, stand_in) if name else contextlib.nullcontext():
                    plan = plan_repair.validate_plan(parse_plan_text(raw[-1]), known,
                                                     dataset.get(sample_id).request)[0].as_list()
            except PlanError:
                plan = []
        out[sample_id] = mapping.plan_to_prediction(sample_id, plan)
    return out


def load_rows(path: Path) -> dict[str, Any]:
    """Rows by sample id: a compare predictions file, or a ``planning_quality.py`` result."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        data = None  # JSON lines: a predictions file
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        return {row["id"]: row for row in data["rows"]}
    return load_predictions(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictions")
    parser.add_argument("--data", default=str(shared_path("taskbench")))
    args = parser.parse_args(argv)
    dataset = load_taskbench(args.data)
    mapping = TaskBenchMapping(dataset.tools)
    rows = load_rows(Path(args.predictions))
    labels = [r for r in dataset.records if r["id"] in rows]
    result = {}
    for without in (None, *SWITCHABLE):
        scores = score(labels, replan(rows, dataset, mapping, without), list(dataset.tools.values()), groups=GROUPS)
        result[f"without {without}" if without else "all repairs"] = {
            g: {m: round(getattr(s, m), 4) for m in METRICS if getattr(s, m) is not None} for g, s in scores.items()}
    print(json.dumps({"requests": len(rows), **result}, indent=1))


if __name__ == "__main__":
    main()
