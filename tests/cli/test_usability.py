"""Small things a user notices at the command line (issue 26, part 7): `python -m hugginggpt`, an
empty request, help pages with examples, the progress table on an 80-column terminal."""

from __future__ import annotations

import io
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from hugginggpt import build
from hugginggpt.cli.examples import EXAMPLES
from hugginggpt.cli.main import SUBCOMMANDS, build_parser, main
from hugginggpt.cli.progress import StageProgress

ROOT = Path(__file__).resolve().parents[2]


def test_python_dash_m_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "hugginggpt", "--version"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("hugginggpt ")
    done = subprocess.run([sys.executable, "-m", "hugginggpt", "tools", "image-to-text"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "image-to-text" in done.stdout


@pytest.mark.parametrize("request_text", ["", "   ", "\n\t"])
def test_an_empty_request_is_one_line_before_any_model_or_llm_call(request_text, capsys, monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("an LLM or agent was built for an empty request")

    monkeypatch.setattr(build, "make_llm", fail)
    monkeypatch.setattr(build, "make_agent", fail)
    assert main(["run", request_text]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("hugginggpt: error: the request is empty")


@pytest.mark.parametrize("command", ["hugginggpt", *SUBCOMMANDS])
def test_every_help_page_ends_with_examples_of_that_command(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    argv = ["--help"] if command == "hugginggpt" else [command, "--help"]
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(argv)
    assert done.value.code == 0
    text = capsys.readouterr().out
    examples = text.split("\nexamples:\n", 1)[1]
    for example, _ in EXAMPLES[command]:
        assert f"  {example}\n" in examples  # printed as written, not re-wrapped
    if command != "hugginggpt":
        assert all(example.startswith(f"hugginggpt {command}") or f"| hugginggpt {command}" in example
                   for example, _ in EXAMPLES[command])


def test_the_examples_use_only_options_the_commands_have():
    parser = build_parser()
    for command, examples in EXAMPLES.items():
        for example, _ in examples:
            words = shlex.split(example.split("hugginggpt ", 1)[1])
            if command == "hugginggpt" or "COMMAND" in words:
                continue
            sub = parser._subparsers._group_actions[0].choices[words[0]]
            known = {option for action in sub._actions for option in action.option_strings}
            used = {word.split("=")[0] for word in words[1:] if word.startswith("-")}
            assert used <= known, (example, used - known)


EVENTS = [
    {"event": "plan", "plan": [{"id": 0, "task": "image-to-text", "step": "describe the photo in a few words"},
                               {"id": 1, "task": "zero-shot-image-classification", "step": "classify it as cat or dog"},
                               {"id": 2, "task": "text-to-speech", "step": "read the description aloud"}]},
    {"event": "selection", "selections": {0: {"model": "Salesforce/blip-image-captioning-base"},
                                          1: {"model": "openai/clip-vit-large-patch14-336"},
                                          2: {"model": "facebook/mms-tts-eng"}}},
    {"event": "task_start", "id": 0, "task": "image-to-text"},
    {"event": "task_end", "id": 0, "task": "image-to-text", "seconds": 12.25,
     "result": {"text": "a cat sitting on a red sofa next to a window"}},
]


def table_at(width: int) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=True, color_system=None)
    with StageProgress(console, live=True) as progress:
        for event in EVENTS:
            progress.update(event)
    final = buffer.getvalue().split("hugginggpt: ")[-1]
    return "\n".join(line.rstrip() for line in final.splitlines())


@pytest.mark.parametrize("width", [80, 100])
def test_the_progress_table_keeps_its_detail_column_readable_at_80_columns(width):
    text = table_at(width)
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines)
    words = " ".join(text.split())
    # the detail column holds the outcome and the planner's words, wrapped, not a column of "…"
    for phrase in ("a cat sitting on a", "classify it as", "read the"):
        assert phrase in words, (phrase, text)
    assert not any(line.strip().endswith("…") and len(line.strip()) <= 2 for line in lines)
    header = lines[1]
    assert header.split() == ["id", "task", "model", "status", "time", "detail"]


def test_a_wide_terminal_shows_whole_names():
    text = table_at(140)
    for name in ("zero-shot-image-classification", "Salesforce/blip-image-captioning-base", "12.2s"):
        assert name in text
