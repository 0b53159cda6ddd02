"""Issue 23 items 2 and 3: the scans of text a user or a model wrote run in linear time, so one
request cannot hold the interpreter (and with it the server's event loop) for seconds.

Each test measures the CPU time of the calling thread (``time.thread_time``), which a loaded machine
does not inflate; the bound (1 s) is the issue's goal figure. Before the fixes: 60 KB of digits cost
the answer's number check 13 s, 3 KB of spaces cost ReAct's action pattern 46 s, 20 KB of newlines
cost its input-end pattern 7 s.
"""

from __future__ import annotations

import time

import pytest

from hugginggpt.agent.answer_check import unknown_numbers

CPU_BOUND_S = 1.0
N = 60_000


def cpu_seconds(fn, *args) -> float:
    started = time.thread_time()
    fn(*args)
    return time.thread_time() - started


HOSTILE_NUMBER_TEXTS = {
    "digits then a word with a digit": "1" * N + "x1",
    "a decimal then a word with a digit": "1." + "1" * N + "x1",
    "digits and dots": "1." * (N // 2),
    "minus signs": "-1" * (N // 2),
    "many distinct decimals": " ".join(f"0.{i}" for i in range(N // 8)),
}


@pytest.mark.parametrize("text", HOSTILE_NUMBER_TEXTS.values(), ids=[k.replace(" ", "-") for k in HOSTILE_NUMBER_TEXTS])
def test_the_answers_number_check_runs_in_linear_time(text: str):
    assert cpu_seconds(unknown_numbers, text, text) < CPU_BOUND_S
    assert cpu_seconds(unknown_numbers, "The score is 0.87.", text) < CPU_BOUND_S
    assert cpu_seconds(unknown_numbers, text, "The score was 0.8734.") < CPU_BOUND_S


def test_the_number_check_still_reads_numbers_as_before():
    shown = "scores: 0.8734, v1.2.3, 5 apples, x-1.25, -0.25, 7.5e-06"
    assert unknown_numbers("It is 0.87 (87.3%), 5.0 apples, -0.25, 1.25, -1.25 and 3.3 and 7.5.", shown) == ["-1.25", "3.3"]
    assert unknown_numbers("0.5x2 and v0.5 are no numbers; 3.14s is", shown) == ["3.14"]
    assert unknown_numbers("a huge integer " + "9" * 5000 + ".0", "9" * 5000) == ["9" * 5000 + ".0"]


HOSTILE_TURNS = {
    "spaces after Action": "Action" + " " * N + "x",
    "spaces around the tool": "Action:" + " " * N + "x" + " " * N + "\nAction Input: {}",
    "newlines after the input": 'Action: echo\nAction Input: {"text": "a"}' + "\n" * N + "x",
    "blank lines after the input": 'Action: echo\nAction Input: {"text": "a"}' + "\n \n" * (N // 3) + "x",
    "many Action heads on one line": "Action:" * (N // 7) + "\nThought: x",
    "spaces after Final": "Final" + " " * N + "Answer",
    "a fence then spaces": "Action: echo\nAction Input: ```json" + " " * N,
}


@pytest.mark.parametrize("text", HOSTILE_TURNS.values(), ids=[k.replace(" ", "-") for k in HOSTILE_TURNS])
def test_a_react_turn_is_read_in_linear_time(text: str):
    from langchain_core.tools import StructuredTool

    from hugginggpt.agent.react import ReActParseError, parse_step

    echo = StructuredTool.from_function(lambda text: text, name="echo", description="Echo the text.")

    def parse() -> None:
        try:
            parse_step(text, {"echo": echo})
        except ReActParseError:
            pass

    assert cpu_seconds(parse) < CPU_BOUND_S


def test_the_react_reader_still_reads_turns_as_before():
    from langchain_core.tools import StructuredTool

    from hugginggpt.agent.react import Action, FinalAnswer, ReActParseError, parse_step

    echo = StructuredTool.from_function(lambda text: text, name="echo", description="Echo the text.")
    step = parse_step('Thought: x\nAction 1 :  echo \t\n\n  Action 1 Input: {"text": "a"}\n  \nObservation: b', {"echo": echo})
    assert isinstance(step, Action) and step.tool is echo and step.args == {"text": "a"}
    final = parse_step("Final Answer: done\nAction: echo\nAction Input: {}", {"echo": echo})
    assert isinstance(final, FinalAnswer) and final.answer.startswith("done")
    with pytest.raises(ReActParseError, match="must be followed by an 'Action Input:' line"):
        parse_step("Action: echo\n \nAction Input: {}", {"echo": echo})


def test_tool_calls_in_model_text_read_deep_nesting_and_fenced_spaces_quickly():
    from hugginggpt.llm.json_text import strip_fence
    from hugginggpt.llm.tool_calls import parse_tool_calls

    assert cpu_seconds(strip_fence, "```json" + " " * N) < CPU_BOUND_S
    for text in ("[1," * N, '{"a":' * N, "```json" + " " * N):
        parsed = parse_tool_calls(text, {"echo"})  # before: RecursionError out of the chat model
        assert parsed.tool_calls == []
        assert cpu_seconds(parse_tool_calls, text, {"echo"}) < CPU_BOUND_S


@pytest.mark.parametrize("text", ["a.docx." * (N // 7), "file:" * (N // 5), "file:///" + "a/" * (N // 2),
                                  "../" * (N // 3) + "x", ".a/" * (N // 3)],
                         ids=["document-names", "file-urls", "a-long-file-url", "parents", "hidden-folders"])
def test_the_answer_path_check_runs_in_linear_time(text: str):
    from hugginggpt.agent.answer_check import unknown_paths

    assert cpu_seconds(unknown_paths, text, {"/runs/r1/outputs/a.png"}) < CPU_BOUND_S
