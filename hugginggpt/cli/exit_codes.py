"""The exit status of the ``hugginggpt`` commands: each code once, with what it means for a script."""

from __future__ import annotations

OK = 0
ERROR = 1
USAGE = 2  # argparse's own code for a command line it refuses
NO_RESULT = 3
INTERRUPTED = 130  # 128 + SIGINT, as shells report it

#: code -> what it means (``hugginggpt run --help`` and the README list them).
MEANINGS = {
    OK: "answered: every task produced its result, or some did (--json lists the failed ones and says "
        "\"status\": \"partial\"), or the request needed no task",
    ERROR: "an error stopped the run (a setting, an input file, the controller, a model): one line on stderr",
    USAGE: "the command line is wrong (an unknown flag or value)",
    NO_RESULT: "tasks ran and none produced a result (the answer on stdout says why; --json: \"status\": \"failed\")",
    INTERRUPTED: "interrupted (Ctrl-C)",
}


def help_block() -> str:
    """The "exit status:" block of a help page."""
    return "exit status:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in MEANINGS.items())
