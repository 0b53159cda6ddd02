"""`hugginggpt score --data DIR --predictions FILE`: TaskBench metrics of a predictions file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

# column title -> GroupScore field; the edit distance is lower-is-better
COLUMNS = {"n-F1": "node_f1", "macro": "node_f1_macro", "e-F1": "edge_f1", "t-F1": "t_f1",
           "v-F1": "v_f1", "NED": "ned"}


def register(subparsers: Any) -> None:
    from hugginggpt.cli.examples import help_options

    parser = subparsers.add_parser("score", help="score TaskBench predictions", description=__doc__.splitlines()[0],
                                   **help_options("score"))
    parser.add_argument("--data", required=True, help="TaskBench folder (tool_desc.json, data.json, ...)")
    parser.add_argument("--predictions", required=True, help="predictions file (JSONL, TaskBench format)")
    parser.add_argument("--json", action="store_true", help="print every group's metrics as JSON")
    parser.set_defaults(func=command)


def metrics_table(scores: dict[str, Any], title: str = "TaskBench metrics") -> Any:
    """A rich table: one row per group that has samples, one column per metric."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("group", no_wrap=True)
    table.add_column("samples", justify="right", no_wrap=True)
    for name in COLUMNS:
        table.add_column(name, justify="right")
    for group, s in scores.items():
        if not s.all_samples:
            continue
        cells = ["-" if getattr(s, f) is None else f"{getattr(s, f):.4f}" for f in COLUMNS.values()]
        table.add_row(group, f"{s.supports}/{s.all_samples}", *cells)
    return table


def command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from hugginggpt.eval.scoring import score_files

    scores = score_files(args.data, args.predictions)
    if args.json:
        sys.stdout.write(json.dumps({g: s.as_dict() for g, s in scores.items()}, indent=2) + "\n")
    else:
        Console().print(metrics_table(scores, title=f"TaskBench metrics: {args.predictions}"))
    return 0
