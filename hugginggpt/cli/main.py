"""The `hugginggpt` command: each subcommand lives in its own module with ``register(subparsers)``.

A subcommand module sets ``func(args) -> int`` on its parser; errors of this library become one
clear line on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from hugginggpt.cli import exit_codes

# name -> module under hugginggpt.cli that registers it
SUBCOMMANDS = ["run", "chat", "tools", "models", "score", "compare", "merge", "serve", "mcp"]


def build_parser() -> argparse.ArgumentParser:
    from hugginggpt.cli.examples import help_options

    parser = argparse.ArgumentParser(
        prog="hugginggpt",
        description="Plan multi-step AI requests with an LLM and run Hugging Face task models.",
        **help_options("hugginggpt"),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"hugginggpt.cli.{name}_cmd").register(sub)
    return parser


def _version() -> str:
    """The installed distribution's version (the package's own when run from a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hugginggpt")
    except PackageNotFoundError:
        from hugginggpt import __version__

        return __version__


#: huggingface_hub's progress bar groups of file downloads: these stay on (a first run fetches a 1 GB GGUF).
DOWNLOAD_BARS = ("huggingface_hub.http_get", "huggingface_hub.xet_get", "huggingface_hub.snapshot_download")


def quiet_libraries() -> None:
    """Keep library chatter (Hub retry warnings, weight-loading bars) off the terminal: the CLI
    reports progress and errors itself, one line each. Download progress bars stay on, on stderr
    (``HF_HUB_DISABLE_PROGRESS_BARS=1`` turns them off too). ``HUGGINGGPT_VERBOSE=1`` keeps everything."""
    import os

    from hugginggpt import config

    if config.env("verbose"):
        return
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_VERBOSITY", "error")  # read when huggingface_hub is imported
    import logging

    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)
    if os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS") is None:
        # Before transformers is imported: it reads the global switch once, for its weight-loading bars.
        from huggingface_hub.utils import disable_progress_bars, enable_progress_bars

        disable_progress_bars()
        for name in DOWNLOAD_BARS:
            enable_progress_bars(name)


def main(argv: list[str] | None = None) -> int:
    from hugginggpt.errors import HuggingGPTError, error_line

    quiet_libraries()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return exit_codes.USAGE
    try:
        return int(args.func(args) or exit_codes.OK)
    except KeyboardInterrupt:
        print("hugginggpt: interrupted", file=sys.stderr)
        return exit_codes.INTERRUPTED
    except HuggingGPTError as exc:
        print(f"hugginggpt: error: {exc}", file=sys.stderr)
        return exit_codes.ERROR
    except (OSError, ValueError) as exc:  # a file, folder or value the OS or a library refused: one line
        print(f"hugginggpt: error: {error_line(exc)}", file=sys.stderr)
        return exit_codes.ERROR


if __name__ == "__main__":
    sys.exit(main())
