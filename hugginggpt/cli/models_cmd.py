"""`hugginggpt models TASK`: the catalog's candidate models for a task, most downloaded first.

`hugginggpt models pull TASK|MODEL_ID|gguf:OWNER/REPO/FILE.gguf` downloads a model into the Hugging
Face cache ahead of a run (progress on stderr, its local path on stdout)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, is_dataclass
from typing import Any

from hugginggpt.errors import HuggingGPTError


def register(subparsers: Any) -> None:
    from hugginggpt.cli.examples import help_options

    parser = subparsers.add_parser("models", help="show candidate models for a task, or `pull` one ahead of a run",
                                   description=__doc__.split("\n\n")[0],
                                   **help_options("models"))
    parser.add_argument("task", help="a task name, e.g. image-classification (see `hugginggpt tools`), or `pull`")
    parser.add_argument("target", nargs="?", metavar="TASK|MODEL_ID",
                        help="with `pull`: a task (its top model), a Hub model id, or gguf:OWNER/REPO/FILE.gguf")
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

    if args.task == "pull":
        return pull_command(args)
    if args.target is not None:
        raise HuggingGPTError(f"unexpected argument {args.target!r}: `hugginggpt models TASK` takes one task "
                              "(to download a model: `hugginggpt models pull TASK|MODEL_ID`)")
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


def pull_command(args: argparse.Namespace) -> int:
    """Download the model ``args.target`` names; print where it lies."""
    from hugginggpt.tools.catalog.pull import pull

    if not args.target:
        raise HuggingGPTError("models pull: name what to download: a task, a Hub model id, or gguf:OWNER/REPO/FILE.gguf")
    path = pull(args.target)
    sys.stdout.write(f"{path}\n")
    return 0
