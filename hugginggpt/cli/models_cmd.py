"""`hugginggpt models TASK`: the catalog's candidate models for a task, most downloaded first."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, is_dataclass
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("models", help="show candidate models for a task", description=__doc__.splitlines()[0])
    parser.add_argument("task", help="a task name, e.g. image-classification (see `hugginggpt tools`)")
    parser.add_argument("-k", type=positive_int, default=5, metavar="N", help="how many candidates (default 5)")
    parser.add_argument("--refresh", action="store_true", help="ask the Hub for the current top models first")
    parser.add_argument("--json", action="store_true", help="print the candidates as JSON")
    parser.set_defaults(func=command)


def positive_int(value: str) -> int:
    """argparse type: a count of at least 1 (anything else is a usage error, exit code 2)."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value!r}")
    return number


def card_line(card: Any) -> str:
    where = f"local {card.local_path}" if card.local_path else "hub"
    description = f"  {card.description}" if card.description else ""
    return f"{card.id}  downloads={card.downloads}  likes={card.likes}  {where}{description}"


def command(args: argparse.Namespace) -> int:
    from hugginggpt.tools import ModelCatalog, get_task

    task = get_task(args.task).name
    catalog = ModelCatalog()
    if args.refresh:
        catalog.refresh(tasks=[task])
    cards = catalog.candidates(task, args.k)
    if args.json:
        text = json.dumps([asdict(c) if is_dataclass(c) else dict(vars(c)) for c in cards], indent=2, ensure_ascii=False)
    elif cards:
        text = "\n".join(card_line(card) for card in cards)
    else:
        text = f"no known models for {task}; try --refresh"
    sys.stdout.write(text + "\n")
    return 0
