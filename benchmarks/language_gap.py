"""Scores two planning_quality.py result files on the requests they share: English against a translation.

    python benchmarks/language_gap.py EN.json ZH.json [ES.json ...]

Each file holds the rows ``planning_quality.py`` wrote (TaskBench, ``--split test`` or ``dev``); the
translated runs plan the same samples with their requests in another language and are scored against
the same gold graphs. Prints, per translated file, TaskBench's metrics and the exact-task-list share on
the shared ids for both files, and the gap (translation minus English).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.planning_quality import taskbench_summary  # noqa: E402
from hugginggpt.eval.taskbench import load_taskbench  # noqa: E402
from tests.shared import shared_path  # noqa: E402

METRICS = ("node_f1", "edge_f1", "v_f1", "t_f1")


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("english", type=Path)
    parser.add_argument("translated", type=Path, nargs="+")
    parser.add_argument("--data", type=Path, default=None, help="the TaskBench folder (default ../shared/taskbench)")
    args = parser.parse_args(argv)
    dataset = load_taskbench(args.data or shared_path("taskbench"))
    english = json.loads(args.english.read_text())
    report = {}
    for path in args.translated:
        result = shared_scores(dataset, english, json.loads(path.read_text()))
        report[path.name] = result
        en, other, gap = result["en"], result["other"], result["gap"]
        print(f"{path.name}: {result['requests']} shared requests")
        for metric in (*METRICS, "exact"):
            print(f"  {metric:8s} en {en[metric]}  translated {other[metric]}  gap {gap.get(metric)}")
    return report


if __name__ == "__main__":
    main()
