"""Score several planning_quality result files on the requests they all planned (a paired A/B).

Dev-slice runs of ``planning_quality.py`` may stop early; comparing their overall figures would
compare different requests. This scores each file on the intersection of their request ids only,
by graph type, exactly as TaskBench's ``evaluate.py`` does (``hugginggpt.eval.scoring``):

    python benchmarks/paired_scores.py docs/results/dev-ab/grammar-k4.json docs/results/dev-ab/grammar-k2.json

Writes ``benchmarks/results/paired_scores.json``. ``--quick``: the two session-4 dev files
(``docs/results/dev-ab/sampling-*.json``) when no files are given.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._stubs import quick_parser, write_result  # noqa: E402
from hugginggpt.eval.scoring import score  # noqa: E402
from hugginggpt.eval.taskbench import load_taskbench  # noqa: E402
from tests.shared import shared_path  # noqa: E402

GROUPS = ["overall_overall", "single_overall", "chain_overall", "dag_overall"]
ROOT = Path(__file__).resolve().parents[1]
QUICK_FILES = [str(ROOT / "docs" / "results" / "dev-ab" / f"sampling-{name}.json") for name in ("checked", "full")]


def paired(files: list[str], data: str) -> dict[str, Any]:
    """``{"requests": n, "files": {name: {"median_seconds", group: {n_f1, e_f1, v_f1}}}}`` on the shared ids."""
    dataset = load_taskbench(data)
    rows = [{row["id"]: row for row in json.loads(Path(f).read_text(encoding="utf-8"))["rows"]} for f in files]
    common = set.intersection(*(set(r) for r in rows)) if rows else set()
    out: dict[str, Any] = {"requests": len(common), "files": {}}
    for name, by_id in zip(files, rows):
        predictions = {i: by_id[i] for i in common}
        labels = [r for r in dataset.records if r["id"] in predictions]
        scores = score(labels, predictions, list(dataset.tools.values()), groups=GROUPS)
        seconds = [by_id[i]["harness"]["seconds"] for i in common]
        out["files"][name] = {
            "median_seconds": round(statistics.median(seconds), 2) if seconds else None,
            **{group: {m: round(getattr(s, m) or 0.0, 3) for m in ("node_f1", "edge_f1", "v_f1")}
               for group, s in scores.items()},
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = quick_parser(__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="planning_quality result files")
    parser.add_argument("--data", default=str(shared_path("taskbench")))
    args = parser.parse_args(argv)
    files = args.files or (QUICK_FILES if args.quick else parser.error("give the result files to compare"))
    result = paired(files, args.data)
    print(f"{result['requests']} requests planned by every run")
    for name, row in result["files"].items():
        groups = "  ".join(f"{g.split('_')[0]} n={row[g]['node_f1']:.3f} e={row[g]['edge_f1']:.3f} v={row[g]['v_f1']:.3f}"
                           for g in GROUPS if g in row)
        print(f"{Path(name).name}: median {row['median_seconds']} s  {groups}")
    print(f"written {write_result('paired_scores', result, quick=args.quick)}")


if __name__ == "__main__":
    main()
