"""`hugginggpt run "REQUEST"`: one request through an agent, live progress on stderr, answer on stdout.

The agent is assembled from the settings by ``hugginggpt.build`` (as the server does). The exit status
tells a script how the run went (``exit_codes``): 0 when the request was answered (every task, some of
them, or none needed), 3 when tasks ran and none produced a result, 1 for an error that stopped the run.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hugginggpt import build
from hugginggpt.cli import exit_codes
from hugginggpt.config import AGENTS, EXECUTION_POLICIES, Settings, load_settings
from hugginggpt.errors import AgentInputError, HuggingGPTError, ResourceError
from hugginggpt.paths import expand_home


def add_agent_arguments(parser: argparse.ArgumentParser, *, request_options: bool = True) -> None:
    """The options shared by `run`, `chat` and `serve` (which has no --file/--quiet: files come with
    each request); unset ones fall back to env and config file."""
    parser.add_argument("--agent", choices=AGENTS, help="global: plan then run (default); react; tools: function calling")
    parser.add_argument("--llm", metavar="SPEC", help="controller, e.g. openai:gpt-4o-mini, gguf:/path/model.gguf")
    parser.add_argument("--base-url", metavar="URL", help="OpenAI-compatible (or TGI) server for the controller")
    parser.add_argument("--execution", choices=EXECUTION_POLICIES, help="where task models run (default hybrid)")
    parser.add_argument("--endpoint", metavar="URL", help="remote inference endpoint for task models")
    parser.add_argument("--trace-dir", metavar="DIR", help="folder for run folders (trace.json, produced files)")
    parser.add_argument("--local-model", action="append", default=[], metavar="[TASK=]DIR",
                        help="a local model folder the task tools may use (repeatable)")
    if request_options:
        parser.add_argument("--file", action="append", default=[], metavar="PATH", help="an input file (repeatable)")
        parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def run_status(output: dict[str, Any]) -> str:
    """``ok`` (every task produced its result, or there was none to run), ``partial`` (some did) or
    ``failed`` (tasks ran and none produced a result), from the output's ``results``."""
    results = output.get("results") or {}
    statuses = [outcome.get("status") for outcome in results.values() if isinstance(outcome, dict)]
    if not statuses or all(status == "ok" for status in statuses):
        return "ok"
    return "partial" if "ok" in statuses else "failed"


def register(subparsers: Any) -> None:
    from hugginggpt.cli.examples import help_options

    options = help_options("run")
    options["epilog"] = exit_codes.help_block() + "\n\n" + options["epilog"]
    parser = subparsers.add_parser("run", help="solve one request", description=__doc__.splitlines()[0], **options)
    parser.add_argument("request", help="what to do, in plain words")
    add_agent_arguments(parser)
    parser.add_argument("--json", action="store_true",
                        help="print the whole output object as JSON, with its status: ok, partial or failed")
    parser.set_defaults(func=command)


def settings_from(args: argparse.Namespace) -> Settings:
    """The settings of these arguments (env and config file fill the rest), checked before any load."""
    from hugginggpt.cli.validation import check_settings

    settings = load_settings(llm=args.llm, base_url=args.base_url, agent=args.agent, execution=args.execution,
                             endpoint=args.endpoint, trace_dir=args.trace_dir,
                             local_models=",".join(args.local_model) or None)
    check_settings(settings)
    return settings


def input_files(paths: list[str]) -> list[str]:
    """Absolute paths of the user's input files; a missing one, or one that is no regular file (a folder,
    ``/dev/zero``, a FIFO), stops the run before any model loads or LLM is called."""
    files = []
    for raw in paths:
        path = expand_home(raw)
        if not path.exists():
            raise ResourceError(None, f"input file not found: {raw}")
        if not path.is_file():
            raise ResourceError(None, f"input file is not a regular file: {raw}")
        files.append(str(path.resolve()))
    return files


def stream_run(agent: Any, request: dict[str, Any], progress: Any) -> dict[str, Any]:
    """Run the agent through its stage events (``stream_stage_events``), showing each; return the
    final output. Ctrl-C closes the iterator, which cancels the run (its trace is still written)."""
    from hugginggpt.agent.events import FINAL

    final = None
    for event in agent.stream_stage_events(request):
        if event.get("event") == FINAL:
            final = event.get("output")
        else:
            progress.update(event)
    if not isinstance(final, dict):
        raise HuggingGPTError("the agent stopped without a final output")
    return final


def print_output(output: dict[str, Any], as_json: bool) -> None:
    """Print the answer (or the whole output and its ``status``) in one write, so a failure never
    leaves half of it."""
    if as_json:
        text = json.dumps({**output, "status": run_status(output)}, indent=2, ensure_ascii=False, default=str)
    else:
        text = str(output.get("output", ""))
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def command(args: argparse.Namespace) -> int:
    from hugginggpt.cli.progress import StageProgress

    if not args.request.strip():  # before any setting is read or model loaded: no LLM call is spent on it
        raise AgentInputError('the request is empty: say what to do, e.g. hugginggpt run "Describe photo.jpg" '
                              "--file photo.jpg")
    settings = settings_from(args)
    files = input_files(args.file)
    agent = build.make_agent(settings, build.make_llm(settings))
    request = build.agent_input(args.request, [], files)
    with StageProgress(enabled=not args.quiet) as progress:
        output = stream_run(agent, request, progress)
    print_output(output, args.json)
    return exit_codes.NO_RESULT if run_status(output) == "failed" else exit_codes.OK
