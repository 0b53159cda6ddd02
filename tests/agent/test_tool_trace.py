"""The shared pieces of the tool-loop agents: calls recorded as a plan, limits, repeats, prompts."""

from __future__ import annotations

import threading
import time
from typing import Literal

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from hugginggpt.agent.request import AgentRequest
from hugginggpt.agent.limits import Budget, RunLimits
from hugginggpt.agent.observations import repeat_note, stopped_message, tool_args_help
from hugginggpt.agent.tool_call import as_envelope, tool_error
from hugginggpt.agent.tool_trace import ToolTrace
from hugginggpt.errors import TaskError


def run_call(trace: ToolTrace, task: str, args: dict, output=None, error: str | None = None):
    step = trace.start(task, args)
    if error is None:
        trace.finish(step, output)
    else:
        trace.fail(step, error)
    return step


def test_plan_edges_follow_the_data_between_calls():
    trace = ToolTrace()
    run_call(trace, "text-to-image", {"text": "a cat"}, {"image": "/runs/r1/outputs/3f2a.png"})
    run_call(trace, "image-to-text", {"image": "/runs/r1/outputs/3f2a.png"}, {"text": "a cat on a red mat"})
    run_call(trace, "text-to-speech", {"text": "Here it is: a cat on a red mat."}, {"audio": "/runs/r1/outputs/9b.wav"})
    run_call(trace, "image-classification", {"image": "3f2a.png", "top_k": 3}, {"text": "cat"})

    assert trace.plan == [
        {"task": "text-to-image", "id": 0, "dep": [], "args": {"text": "a cat"}},
        {"task": "image-to-text", "id": 1, "dep": [0], "args": {"image": "<resource>-0"}},
        {"task": "text-to-speech", "id": 2, "dep": [1], "args": {"text": "Here it is: <resource>-1."}},
        {"task": "image-classification", "id": 3, "dep": [0], "args": {"image": "<resource>-0", "top_k": 3}},
    ]


def test_short_texts_only_link_on_exact_match_and_failures_produce_nothing():
    trace = ToolTrace()
    run_call(trace, "image-classification", {"image": "/u/a.png"}, {"text": "cat"})
    run_call(trace, "translation", {"text": "a cat and a dog"}, {"text": "un chat"})
    run_call(trace, "text-to-image", {"text": "cat"}, {"image": "/runs/x/outputs/1.png"})
    run_call(trace, "image-to-image", {"image": "/runs/x/outputs/1.png"}, error="image-to-image: model missing")
    run_call(trace, "object-detection", {"images": ["/runs/x/outputs/1.png", "/u/b.png"]}, {"text": "1 cat"})

    plan = trace.plan
    assert plan[1]["dep"] == [] and plan[1]["args"] == {"text": "a cat and a dog"}
    assert plan[2] == {"task": "text-to-image", "id": 2, "dep": [0], "args": {"text": "<resource>-0"}}
    assert plan[3]["dep"] == [2]
    assert plan[4]["args"] == {"images": ["<resource>-2", "/u/b.png"]} and plan[4]["dep"] == [2]
    results = trace.results
    assert results[3] == {"task": "image-to-image", "status": "failed", "result": None,
                          "error": "image-to-image: model missing"}
    assert results[0]["status"] == "ok" and results[0]["result"] == {"text": "cat"}


def test_parallel_recording_gives_unique_ids():
    trace = ToolTrace()

    def worker(n):
        for i in range(20):
            run_call(trace, "t", {"n": n, "i": i}, {"text": f"{n}-{i}"})

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(node["id"] for node in trace.plan) == list(range(80))


def test_repeated_calls_are_found_regardless_of_key_order():
    trace = ToolTrace()
    first = run_call(trace, "t", {"a": 1, "b": [1, 2]}, {"text": "r"})

    assert trace.earlier_call("t", {"b": [1, 2], "a": 1}) is first
    assert trace.earlier_call("t", {"a": 2, "b": [1, 2]}) is None
    assert trace.earlier_call("u", {"a": 1, "b": [1, 2]}) is None
    note = repeat_note(first)
    assert note.startswith('{"text": "r"}') and "same call as step 0" in note


def test_budget_limits_and_first_reason_wins():
    budget = Budget(RunLimits(max_steps=2, max_llm_calls=1, time_budget_s=60, max_repeats=2))
    assert budget.take_llm_call() and not budget.take_llm_call()
    assert budget.stop_reason == "reached the limit of 1 LLM calls"
    assert not budget.take_step()  # a stopped run takes nothing more
    budget.stop("something else")
    assert budget.stop_reason == "reached the limit of 1 LLM calls"

    steps = Budget(RunLimits(max_steps=1))
    assert steps.take_step() and not steps.take_step()
    assert steps.stop_reason == "reached the limit of 1 steps"

    repeats = Budget(RunLimits(max_repeats=2))
    assert repeats.note_repeat("nap") and not repeats.note_repeat("nap")
    assert repeats.stop_reason == "repeated the same nap call 2 times without progress"


def test_time_budget():
    budget = Budget(RunLimits(time_budget_s=0.05))
    assert budget.take_step()
    time.sleep(0.08)
    assert not budget.take_llm_call()
    assert budget.stop_reason == "ran out of the time budget of 0.05 s"


@pytest.mark.parametrize("field", ["max_steps", "max_llm_calls", "time_budget_s", "max_repeats"])
def test_limits_must_be_positive(field):
    with pytest.raises(ValueError, match=field):
        RunLimits(**{field: 0})


def test_stopped_message_says_why_and_what_was_done():
    trace = ToolTrace()
    run_call(trace, "image-to-text", {"image": "/u/a.png"}, {"text": "a cat " * 60})
    run_call(trace, "text-to-speech", {"text": "x"}, error="text-to-speech: no model")

    message = stopped_message("reached the limit of 2 steps", trace, "Thought: one more")
    lines = message.splitlines()
    assert lines[0] == "stopped: reached the limit of 2 steps."
    assert lines[1] == "Done so far:"
    assert lines[2].startswith('0. image-to-text -> {"text": "a cat') and lines[2].endswith("...")
    assert lines[3] == "1. text-to-speech -> failed: text-to-speech: no model"
    assert lines[4] == "Last model message: Thought: one more"


def test_envelopes_and_error_lines():
    assert as_envelope({"image": "/a.png"}) == {"image": "/a.png"}
    assert as_envelope('{"text": "x"}') == {"text": "x"}
    assert as_envelope("[1, 2]") == {"text": "[1, 2]"}
    assert as_envelope("hello") == {"text": "hello"}
    assert tool_error("t", TaskError("t", "boom")) == "t: boom"
    assert tool_error("t", ValueError("bad")) == "t: ValueError: bad"
    assert tool_error("t", KeyError()) == "t: KeyError"


class Args(BaseModel):
    text: str = Field(description="What to say.")
    voice: str | None = Field(None, description="Voice name.")
    lang: Literal["en", "fr"] = Field("en", description="Language.")


def test_tool_args_help_lists_the_schema():
    tool = StructuredTool.from_function(lambda text, voice=None, lang="en": text, name="tts",
                                        description="Speak.", args_schema=Args)
    assert tool_args_help(tool).splitlines() == [
        "    - text (string, required): What to say.",
        "    - voice (string, optional): Voice name.",
        "    - lang (string, optional): Language. One of: en, fr.",
    ]


def test_agent_request_parsing():
    assert AgentRequest.parse("hi") == AgentRequest("hi")
    request = AgentRequest.parse({"input": "hi", "chat_history": [("human", "a"), ("ai", "b")], "files": ["/x.png"]})
    assert [type(m) for m in request.chat_history] == [HumanMessage, AIMessage]
    assert request.user_text() == "hi\n\nFiles provided by the user:\n- /x.png"
    with pytest.raises(TypeError, match="agent input must be"):
        AgentRequest.parse({"question": "hi"})


def test_resource_references_resolve_to_earlier_outputs():
    trace = ToolTrace()
    run_call(trace, "text-to-image", {"text": "a cat"}, {"image": "/runs/r/outputs/1.png", "text": "made it"})
    run_call(trace, "image-to-text", {"image": "/runs/r/outputs/1.png"}, {"text": "a cat"})
    run_call(trace, "broken", {"text": "x"}, error="broken: failed")

    resolved = trace.resolve_references({"image": "<resource>-0", "text": "Say <resource-1> twice",
                                         "list": ["<resource>1"], "missing": "<resource>-2", "n": 3})
    assert resolved == {"image": "/runs/r/outputs/1.png", "text": "Say a cat twice",
                        "list": ["a cat"], "missing": "<resource>-2", "n": 3}
    step = trace.start("image-classification", trace.resolve_references({"image": "<resource>-0"}))
    assert step.node() == {"task": "image-classification", "id": 3, "dep": [0], "args": {"image": "<resource>-0"}}


def test_every_agent_reads_its_input_the_same_way(tmp_path):
    """One parser for the contract's input: the global-plan agent rejects what the tool-loop agents do."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel

    from hugginggpt.agent import GlobalPlanAgent
    from hugginggpt.errors import AgentInputError, HuggingGPTError

    agent = GlobalPlanAgent(FakeMessagesListChatModel(responses=[]), tools=[], workspace_root=tmp_path)
    with pytest.raises(AgentInputError, match="agent input must be") as caught:
        agent.invoke({"question": "hi"})
    assert isinstance(caught.value, HuggingGPTError) and isinstance(caught.value, TypeError)
    picture = tmp_path / "x.png"
    picture.write_bytes(b"png")
    workspace = AgentRequest.parse({"input": "hi", "files": [str(picture)]}).new_workspace(tmp_path / "runs")
    assert workspace.root.parent == tmp_path / "runs" and workspace.is_allowed(picture)
