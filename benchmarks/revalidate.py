"""Re-validate recorded planner answers offline and score them: the effect of a repair without LLM calls.

``hugginggpt compare`` records each global-plan answer (``harness.raw_outputs``) next to its
prediction. This script parses the last answer again, validates it with and without the chain
re-linking repair (``plan_repair.relink_skipped_steps``), converts it to TaskBench's format and
scores both, so that repair is measured on exactly the same LLM answers.

    python benchmarks/revalidate.py docs/results/taskbench-test-qwen2.5-coder-1.5b/predictions/global.json
"""

from __future__ import annotations

import argparse
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


def replan(rows: dict[str, Any], dataset: Any, mapping: TaskBenchMapping, relink: bool) -> dict[str, Any]:
    table = task_table()
    known = {n: task_info_from_spec(table[n]) for n in mapping.domain_tasks()}
    out = {}
    for sample_id, row in rows.items():
        raw = (row.get("harness") or {}).get("raw_outputs") or []
        plan: list[dict[str, Any]] = []
        if raw:
            try:
                with mock.patch.object(plan_repair, "relink_skipped_steps",
                                       plan_repair.relink_skipped_steps if relink else lambda *a: None):
                    plan = plan_repair.validate_plan(parse_plan_text(raw[-1]), known,
                                                     dataset.get(sample_id).request)[0].as_list()
            except PlanError:
                plan = []
        out[sample_id] = mapping.plan_to_prediction(sample_id, plan)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictions")
    parser.add_argument("--data", default=str(shared_path("taskbench")))
    args = parser.parse_args(argv)
    dataset = load_taskbench(args.data)
    mapping = TaskBenchMapping(dataset.tools)
    rows = load_predictions(Path(args.predictions))
    labels = [r for r in dataset.records if r["id"] in rows]
    result = {}
    for relink in (False, True):
        scores = score(labels, replan(rows, dataset, mapping, relink), list(dataset.tools.values()), groups=GROUPS)
        result["with relink" if relink else "without relink"] = {
            g: {m: round(getattr(s, m), 4) for m in METRICS if getattr(s, m) is not None} for g, s in scores.items()}
    print(json.dumps({"requests": len(rows), **result}, indent=1))


if __name__ == "__main__":
    main()
