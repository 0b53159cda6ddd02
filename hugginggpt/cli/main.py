"""The `hugginggpt` command: each subcommand lives in its own module with ``register(subparsers)``.

A subcommand module sets ``func(args) -> int`` on its parser; errors of this library become one
clear line on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# name -> module under hugginggpt.cli that registers it
SUBCOMMANDS = ["run", "chat", "tools", "models", "score", "compare"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hugginggpt",
        description="Plan multi-step AI requests with an LLM and run Hugging Face task models.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"hugginggpt.cli.{name}_cmd").register(sub)
    return parser


def quiet_libraries() -> None:
    """Keep library chatter (Hub retry warnings, weight-loading bars) off the terminal: the CLI
    reports progress and errors itself, one line each. ``HUGGINGGPT_VERBOSE=1`` keeps them."""
    import os

    if os.environ.get("HUGGINGGPT_VERBOSE"):
        return
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_VERBOSITY", "error")  # read when huggingface_hub is imported
    import logging

    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


def main(argv: list[str] | None = None) -> int:
    from hugginggpt.errors import HuggingGPTError

    quiet_libraries()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("hugginggpt: interrupted", file=sys.stderr)
        return 130
    except HuggingGPTError as exc:
        print(f"hugginggpt: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
