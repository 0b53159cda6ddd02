"""`hugginggpt chat`: a multi-turn conversation; each line is a request that sees the earlier turns.

Reads one request per line from stdin until ``/exit`` (or end of input). A failed turn prints its
error line and the conversation goes on; the history keeps only turns that got an answer.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hugginggpt import build
from hugginggpt.cli import run_cmd
from hugginggpt.errors import HuggingGPTError

EXIT_COMMANDS = ("/exit", "/quit")


def register(subparsers: Any) -> None:
    from hugginggpt.cli.examples import help_options

    parser = subparsers.add_parser("chat", help="multi-turn conversation on stdin", description=__doc__.splitlines()[0],
                                   **help_options("chat"))
    run_cmd.add_agent_arguments(parser)
    parser.set_defaults(func=command)


def _requests(interactive: bool):
    """Non-empty input lines until an exit command or end of input."""
    while True:
        if interactive:
            print("you> ", end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline()
        if not line:
            return
        text = line.strip()
        if text in EXIT_COMMANDS:
            return
        if text:
            yield text


def command(args: argparse.Namespace) -> int:
    from langchain_core.messages import AIMessage, HumanMessage

    from hugginggpt.cli.progress import StageProgress

    settings = run_cmd.settings_from(args)
    files = run_cmd.input_files(args.file)
    agent = build.make_agent(settings, build.make_llm(settings))
    history: list[Any] = []
    for text in _requests(interactive=sys.stdin.isatty()):
        try:
            with StageProgress(enabled=not args.quiet) as progress:
                output = run_cmd.stream_run(agent, build.agent_input(text, list(history), files), progress)
        except HuggingGPTError as exc:
            print(f"hugginggpt: error: {exc}", file=sys.stderr)
            continue
        answer = str(output.get("output", ""))
        run_cmd.print_output(output, as_json=False)
        history += [HumanMessage(text), AIMessage(answer)]
    return 0
