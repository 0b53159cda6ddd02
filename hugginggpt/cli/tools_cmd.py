"""`hugginggpt tools [TASK]`: the tasks the planner may use and their arguments, from the task table."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    from hugginggpt.cli.examples import help_options

    parser = subparsers.add_parser("tools", help="list the tasks and their arguments", description=__doc__.splitlines()[0],
                                   **help_options("tools"))
    parser.add_argument("task", nargs="?", help="show one task in detail")
    parser.add_argument("--json", action="store_true", help="print the task specs as JSON")
    parser.set_defaults(func=command)


def arg_summary(arg: Any) -> str:
    """``name:kind`` with ``*`` for a required argument, e.g. ``image*:image``."""
    return f"{arg.name}{'*' if arg.required else ''}:{arg.kind}"


def task_lines(tasks: list[Any]) -> list[str]:
    """One aligned line per task: name, category, arguments, description."""
    rows = [(t.name, t.category, " ".join(arg_summary(a) for a in t.args), t.description) for t in tasks]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [f"{n:<{widths[0]}}  {c:<{widths[1]}}  {a:<{widths[2]}}  {d}".rstrip() for n, c, a, d in rows]


def task_detail(task: Any) -> list[str]:
    outputs = f"  outputs: {', '.join(task.outputs)}" + (f" ({task.returns})" if task.returns else "")
    lines = [f"{task.name} ({task.category})", f"  {task.description}", outputs, "  arguments:"]
    for arg in task.args:
        extra = []
        if arg.required:
            extra.append("required")
        if arg.default is not None:
            extra.append(f"default {arg.default!r}")
        if arg.choices:
            extra.append(f"one of {', '.join(arg.choices)}")
        if arg.items:
            extra.append(f"items {arg.items}")
        note = f" ({'; '.join(extra)})" if extra else ""
        lines.append(f"    {arg.name}: {arg.kind}{note} - {arg.description}")
    return lines


def command(args: argparse.Namespace) -> int:
    from hugginggpt.tools import get_task, task_table

    tasks = [get_task(args.task)] if args.task else list(task_table().values())
    if args.json:
        data: Any = tasks[0].model_dump() if args.task else {t.name: t.model_dump() for t in tasks}
        text = json.dumps(data, indent=2, ensure_ascii=False)
    else:
        text = "\n".join(task_detail(tasks[0]) if args.task else task_lines(tasks))
    sys.stdout.write(text + "\n")
    return 0
