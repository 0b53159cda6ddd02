"""`hugginggpt merge`: join the folders of `hugginggpt compare --shard I/N` runs into one report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    from hugginggpt.cli.examples import help_options

    parser = subparsers.add_parser("merge", help="join compare --shard folders into one report",
                                   description=__doc__.splitlines()[0], **help_options("merge"))
    parser.add_argument("shards", nargs="+", metavar="FOLDER", help="the --out folder of each shard")
    parser.add_argument("--out", required=True, help="folder of the merged predictions, tables and plots")
    parser.add_argument("--data", default=None, help="TaskBench folder (default: the one the shards ran on)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from hugginggpt.cli.compare_cmd import show_report
    from hugginggpt.eval.shards import merge

    report = merge([Path(f) for f in args.shards], Path(args.out), data=args.data)
    show_report(report, critic=any(r.verdicts for r in report.reports.values()), plots=not args.no_plots)
    return 0
