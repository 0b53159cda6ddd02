"""Fuzzing tool arguments: whatever an LLM fills in, a task tool returns a result envelope or raises a
``TaskError`` subclass naming the task (``InvalidArgumentsError``, ``ResourceError``); the generated
pydantic models raise only ``ValidationError``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from hugginggpt.errors import TaskError
from hugginggpt.tools import args_model, build_tools
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.resources import Workspace
from hugginggpt.tools.results import check_envelope, envelope
from hugginggpt.tools.table import task_table
from tests.reliability.strategies import (
    FAST,
    SLOW,
    arg_values,
    json_values,
    mutated_name,
)

SPECS = task_table()


class EchoExecutor(Executor):
    """Accepts every call and reports what it received (paths as strings)."""

    name = "echo"

    def __init__(self) -> None:
        self.calls = 0

    def can_run(self, task: str, model: str | None) -> bool:
        return True

    def run(self, call: TaskCall) -> dict[str, Any]:
        self.calls += 1
        return envelope(text=json.dumps(call.args, default=str)[:200], task=call.task.name)


@st.composite
def tool_calls(draw: Any) -> tuple[str, Any]:
    """A task and arguments: its own names (sometimes misspelt) with any values, or any JSON object."""
    task = draw(st.sampled_from(sorted(SPECS)))
    names = [a.name for a in SPECS[task].args]
    key = (st.sampled_from(names).flatmap(mutated_name) if names else st.nothing()) | st.text(max_size=8)
    args = draw(st.dictionaries(key, arg_values(), max_size=4)
                | st.dictionaries(st.text(max_size=8), json_values(4), max_size=3))
    return task, args


@pytest.fixture(scope="module")
def fuzz_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("tool-fuzz")
    executor = EchoExecutor()
    ws = Workspace(root / "run", max_download_bytes=1024, download_timeout=0.5)
    return {t.name: t for t in build_tools(executor=executor, workspace=ws)}, executor


def check_model(task: str, args: Any) -> None:
    try:
        values = args_model(SPECS[task]).model_validate(args)
    except ValidationError:
        return
    assert set(values.model_dump()) == {a.name for a in SPECS[task].args}


def check_tool(tools: dict, task: str, args: Any) -> None:
    try:
        result = tools[task].invoke(args)
    except TaskError as exc:
        assert exc.task == task and str(exc).startswith(f"{task}: ")
        assert "Traceback" not in str(exc)
        return
    check_envelope(result, task=task)


@pytest.mark.timeout(120)
@FAST
@given(tool_calls())
def test_fuzz_args_models(call) -> None:
    check_model(*call)


@pytest.mark.timeout(120)
@FAST
@given(tool_calls())
def test_fuzz_tools(fuzz_env, call) -> None:
    tools, _ = fuzz_env
    check_tool(tools, *call)


@pytest.mark.slow
@pytest.mark.timeout(600)
@SLOW
@given(tool_calls())
def test_fuzz_args_models_10k(call) -> None:
    check_model(*call)


@pytest.mark.slow
@pytest.mark.timeout(600)
@SLOW
@given(tool_calls())
def test_fuzz_tools_10k(fuzz_env, call) -> None:
    tools, _ = fuzz_env
    check_tool(tools, *call)


def test_valid_arguments_do_reach_the_executor(fuzz_env) -> None:
    """Control: the fuzz target is not a tool that refuses everything."""
    tools, executor = fuzz_env
    before = executor.calls
    assert tools["summarization"].invoke({"text": "hello"}) == {"text": '{"text": "hello"}'}
    tools["zero-shot-classification"].invoke({"text": "hi", "candidate_labels": ["a", "b"]})
    assert executor.calls == before + 2
