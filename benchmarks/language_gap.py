"""Scores two planning_quality.py result files on the requests they share: English against a translation.

    python benchmarks/language_gap.py EN.json ZH.json [ES.json ...] [--quick]

Each file holds the rows ``planning_quality.py`` wrote (TaskBench, ``--split test`` or ``dev``); the
translated runs plan the same samples with their requests in another language and are scored against
the same gold graphs. Prints, per translated file, TaskBench's metrics and the exact-task-list share on
the shared ids for both files, and the gap (translation minus English); writes
``benchmarks/results/language_gap.json``. ``--quick``: session 12's English and Chinese dev files
(``docs/results/dev-ab/s12-b0-*-dev90.json``) when no files are given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._stubs import quick_parser, write_result  # noqa: E402
from benchmarks.planning_quality import taskbench_summary  # noqa: E402
from hugginggpt.eval.taskbench import load_taskbench  # noqa: E402
from tests.shared import shared_path  # noqa: E402

METRICS = ("node_f1", "edge_f1", "v_f1", "t_f1")
DEV_AB = Path(__file__).resolve().parents[1] / "docs" / "results" / "dev-ab"
QUICK_FILES = [DEV_AB / "s12-b0-en-dev90.json", DEV_AB / "s12-b0-zh-dev90.json"]


def shared_scores(dataset: Any, english: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Both files' overall scores and exact share on the ids both planned."""
    ids = {row["id"] for row in english["rows"]} & {row["id"] for row in other["rows"]}
    out = {"requests": len(ids)}
    for name, result in (("en", english), ("other", other)):
        summary = taskbench_summary(dataset, [row for row in result["rows"] if row["id"] in ids])
        overall = summary["scores"]["overall_overall"]
        out[name] = {**{m: overall[m] for m in METRICS}, "exact": summary["exact"].get("overall")}
    out["gap"] = {m: round(out["other"][m] - out["en"][m], 4) for m in (*METRICS, "exact")
                  if out["other"][m] is not None and out["en"][m] is not None}
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = quick_parser(__doc__.splitlines()[0])
    parser.add_argument("files", type=Path, nargs="*", help="the English result file, then one or more translated ones")
    parser.add_argument("--data", type=Path, default=None, help="the TaskBench folder (default ../shared/taskbench)")
    args = parser.parse_args(argv)
    files = args.files or (QUICK_FILES if args.quick else [])
    if len(files) < 2:
        parser.error("give the English result file and at least one translated one")
    dataset = load_taskbench(args.data or shared_path("taskbench"))
    english = json.loads(files[0].read_text())
    report = {}
    for path in files[1:]:
        result = shared_scores(dataset, english, json.loads(path.read_text()))
        report[path.name] = result
        en, other, gap = result["en"], result["other"], result["gap"]
        print(f"{path.name}: {result['requests']} shared requests")
        for metric in (*METRICS, "exact"):
            print(f"  {metric:8s} en {en[metric]}  translated {other[metric]}  gap {gap.get(metric)}")
    print(f"written {write_result('language_gap', report, quick=args.quick)}")
    return report


if __name__ == "__main__":
    main()
