"""acall_llm: every stage's LLM call timed, traced and failing one way."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from hugginggpt.agent.llm_call import acall_llm
from hugginggpt.agent.trace import Trace
from hugginggpt.errors import LLMError, PlanError


async def _answer(value):
    return value


async def _raise(error):
    raise error


@pytest.fixture
def trace(tmp_path):
    return Trace(tmp_path / "trace.json")


async def test_a_call_is_timed_and_recorded(trace):
    message = AIMessage("Done.", response_metadata={"finish_reason": "length"}, usage_metadata={
        "input_tokens": 3, "output_tokens": 1, "total_tokens": 4})
    prompt = [HumanMessage("hi")]
    reply = await acall_llm("response", _answer(message), prompt, trace=trace)

    assert (reply.text, reply.finish_reason, reply.cut_off, reply.parsed) == ("Done.", "length", True, None)
    [call] = trace.data["llm_calls"]
    assert call["stage"] == "response" and call["prompt"] == prompt and call["output"] == "Done."
    assert call["finish_reason"] == "length" and call["usage"]["input_tokens"] == 3 and call["seconds"] >= 0
    assert "error" not in call


async def test_constrained_answers_and_tool_calls(trace):
    reply = await acall_llm("selection", _answer({"raw": AIMessage(""), "parsed": {"0": "a"}}), "p", trace=trace)
    assert reply.parsed == {"0": "a"} and reply.text == ""
    calling = AIMessage("", tool_calls=[{"name": "nap", "args": {}, "id": "c1"}])
    await acall_llm("agent", _answer(calling), [], trace=trace)
    assert [c["output"] for c in trace.data["llm_calls"]] == ['{"0": "a"}', calling]


async def test_a_failing_model_is_an_llm_error_naming_the_stage(trace):
    with pytest.raises(LLMError, match=r"^critic: the LLM call failed: ConnectionError: refused$"):
        await acall_llm("critic", _raise(ConnectionError("refused\nmore detail")), [], trace=trace)
    assert trace.data["llm_calls"][0]["error"] == "ConnectionError: refused"
    with pytest.raises(PlanError, match="^no plan$"):  # this library's own errors pass through
        await acall_llm("planning", _raise(PlanError("no plan")), [])
