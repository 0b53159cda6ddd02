"""Re-validate recorded planner answers offline and score them: the effect of a plan pass without LLM calls.

``hugginggpt compare`` records each global-plan answer (``harness.raw_outputs``) next to its
prediction, and ``benchmarks/planning_quality.py`` in its rows (``harness.raw``). This script parses
the last answer again, runs the plan passes on it (``hugginggpt/agent/plan/passes.py``: ``PASSES``)
with every pass and then without each switchable one in turn (by its name: ``task-names``,
``arguments``, ``references``, ``repeats``, ``kinds``), converts each to TaskBench's format and scores
them, so a pass is measured on exactly the same LLM answers. ``--write FILE`` keeps the predictions
re-validated with every pass (the plans the current planner makes of those answers), for
``hugginggpt compare`` to judge and report.

    python benchmarks/revalidate.py docs/results/taskbench-test-qwen2.5-coder-1.5b/predictions/global.json
    python benchmarks/revalidate.py benchmarks/results/planning_quality-dev.json --without kinds,repeats

Writes ``benchmarks/results/revalidate.json``. ``--quick``: the first 5 rows of session 4's dev file
(``docs/results/dev-ab/sampling-checked.json``) when no file is given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._stubs import quick_parser, write_result  # noqa: E402
from hugginggpt.agent.plan import validate_plan  # noqa: E402
from hugginggpt.agent.plan.parse import parse_plan_text  # noqa: E402
from hugginggpt.agent.plan.passes import SWITCHABLE  # noqa: E402
from hugginggpt.errors import PlanError  # noqa: E402
from hugginggpt.eval.mapping import TaskBenchMapping  # noqa: E402
from hugginggpt.eval.scoring import METRICS, load_predictions, score  # noqa: E402
from hugginggpt.eval.taskbench import load_taskbench  # noqa: E402
from tests.shared import shared_path  # noqa: E402

GROUPS = ["overall_overall", "single_overall", "chain_overall", "dag_overall"]
QUICK_FILE = ROOT / "docs" / "results" / "dev-ab" / "sampling-checked.json"


def replan(rows: dict[str, Any], dataset: Any, mapping: TaskBenchMapping, without: str | None,
           keep: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each row's last answer validated again, as TaskBench predictions; ``without``: passes switched
    off (names joined by ","). ``keep``, when given, receives each sample's plan and repairs."""
    known = mapping.domain_specs()
    off = [name for name in (without or "").split(",") if name]
    out = {}
    for sample_id, row in rows.items():
        harness = row.get("harness") or {}
        raw = harness.get("raw_outputs") or harness.get("raw") or []
        plan: list[dict[str, Any]] = []
        repairs: list[dict[str, Any]] = []
        if raw:
            try:
                validated, repairs = validate_plan(parse_plan_text(raw[-1]), known, dataset.get(sample_id).request,
                                                   without=off)
                plan = validated.as_list()
            except PlanError:
                plan = []
        out[sample_id] = mapping.plan_to_prediction(sample_id, plan)
        if keep is not None:
            keep[sample_id] = {"plan": plan, "repairs": repairs}
    return out


def write_predictions(rows: dict[str, Any], predictions: dict[str, Any], kept: dict[str, Any], path: Path) -> None:
    """``rows`` as a predictions file (JSON lines) whose plans are the re-validated ones: each row keeps
    its recorded answers, seconds and usage, and says ``"revalidated": true``."""
    with path.open("w", encoding="utf-8") as fh:
        for sample_id, row in rows.items():
            harness = {**(row.get("harness") or {}), **kept[sample_id], "revalidated": True}
            fh.write(json.dumps({**row, "result": predictions[sample_id]["result"], "harness": harness},
                                ensure_ascii=False) + "\n")


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
    parser = quick_parser(__doc__.splitlines()[0])
    parser.add_argument("predictions", nargs="?", default=None)
    parser.add_argument("--data", default=str(shared_path("taskbench")))
    parser.add_argument("--without", action="append", default=[], metavar="NAME[,NAME]",
                        help="also score with these passes switched off together (repeatable)")
    parser.add_argument("--write", metavar="FILE", default=None,
                        help="write the predictions re-validated with every pass to FILE (JSON lines)")
    args = parser.parse_args(argv)
    if args.predictions is None and not args.quick:
        parser.error("give a predictions or planning_quality result file")
    dataset = load_taskbench(args.data)
    mapping = TaskBenchMapping(dataset.tools)
    rows = load_rows(Path(args.predictions or QUICK_FILE))
    if args.quick:
        rows = dict(list(rows.items())[:5])
    labels = [r for r in dataset.records if r["id"] in rows]
    result = {}
    for without in (None, *SWITCHABLE, *args.without):
        kept: dict[str, Any] = {}
        predictions = replan(rows, dataset, mapping, without, kept)
        if without is None and args.write:
            write_predictions(rows, predictions, kept, Path(args.write))
        scores = score(labels, predictions, list(dataset.tools.values()), groups=GROUPS)
        result[f"without {without}" if without else "all passes"] = {
            g: {m: round(getattr(s, m), 4) for m in METRICS if getattr(s, m) is not None} for g, s in scores.items()}
    report = {"requests": len(rows), **result}
    print(json.dumps(report, indent=1))
    print(f"written {write_result('revalidate', report, quick=args.quick)}", file=sys.stderr)  # stdout: the JSON alone


if __name__ == "__main__":
    main()
