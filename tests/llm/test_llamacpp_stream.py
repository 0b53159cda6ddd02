"""Streaming with tools offered: the chunks of ``stream`` / ``astream`` add up to what ``invoke`` returns
(content, tool calls, invalid tool calls), text that is not a call streams as it is written, and
``create_agent`` runs on the streamed answers.

The real SmolLM2-135M writes every answer here, decoding under a llama.cpp grammar that admits one
text only (``grammar=`` reaches ``create_chat_completion`` like any other call argument), so the exact
text of a tool call is what the model itself produced.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool

from hugginggpt.llm.llamacpp import LlamaCppChatModel
from tests.shared import gguf_or_skip

pytestmark = pytest.mark.slow

CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
TEXT_THEN_CALL = f"Let me check.\n<tool_call>\n{CALL}\n</tool_call>"
ANSWER = "It is sunny in Paris."
UNKNOWN_TOOL = '<tool_call>\n{"name": "launch_rockets", "arguments": {}}\n</tool_call>'
GOOD_AND_UNREADABLE = (
    'Checking both.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>\n'
    '<tool_call>get_weather(city="Oslo")</tool_call>'
)


def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return f"{city}: sunny, 21 degrees Celsius"


TOOL = StructuredTool.from_function(get_weather)
QUESTION = "What is the weather in Paris?"


def exactly(text: str):
    """A grammar that admits ``text`` and nothing else."""
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string("root ::= " + json.dumps(text), verbose=False)


@pytest.fixture(scope="module")
def smollm():
    return LlamaCppChatModel(model_path=gguf_or_skip("smollm2-135m"), n_ctx=1024, max_tokens=96)


def added(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def without_ids(calls: list[dict]) -> list[dict]:
    return [{key: value for key, value in call.items() if key != "id"} for call in calls]


def assert_same_message(streamed: AIMessageChunk | AIMessage, invoked: AIMessage) -> None:
    """What LangChain's chunk addition can carry: everything but an invalid call's error (a tool-call
    chunk has no place for one) and, where the model's text of an invalid call reads as a JSON object,
    that text as a JSON string (else LangChain would read it back as a valid call)."""
    assert streamed.content == invoked.content
    assert without_ids(streamed.tool_calls) == without_ids(invoked.tool_calls)
    ids = [call["id"] for call in streamed.tool_calls + streamed.invalid_tool_calls]
    assert all(ids) and len(set(ids)) == len(ids)
    assert [c["name"] for c in streamed.invalid_tool_calls] == [c["name"] for c in invoked.invalid_tool_calls]
    for mine, theirs in zip(streamed.invalid_tool_calls, invoked.invalid_tool_calls, strict=True):
        assert mine["args"] in (theirs["args"], json.dumps(theirs["args"])) and mine["error"] is None
    assert streamed.response_metadata["finish_reason"] == invoked.response_metadata["finish_reason"]
    assert streamed.usage_metadata == invoked.usage_metadata


@pytest.fixture(scope="module")
def answered(smollm):
    """``invoke``'s message and ``stream``'s chunks for an answer text (each text run once per module)."""
    seen: dict[str, tuple[AIMessage, list[AIMessageChunk]]] = {}

    def answer(text: str) -> tuple[AIMessage, list[AIMessageChunk]]:
        if text not in seen:
            llm = smollm.bind_tools([TOOL], grammar=exactly(text))
            seen[text] = llm.invoke(QUESTION), list(llm.stream(QUESTION))
        return seen[text]

    return answer


@pytest.mark.parametrize("text", [TEXT_THEN_CALL, CALL, ANSWER, UNKNOWN_TOOL, GOOD_AND_UNREADABLE])
def test_stream_adds_up_to_invoke(answered, text):
    invoked, chunks = answered(text)
    assert_same_message(added(chunks), invoked)
    assert "<tool_call>" not in invoked.content or invoked.invalid_tool_calls  # only unusable blocks stay text
    assert [c.chunk_position for c in chunks].count("last") == 1 and chunks[-1].chunk_position == "last"


def test_invalid_calls_stay_invalid_when_streamed(answered):
    streamed = added(answered(GOOD_AND_UNREADABLE)[1])
    assert [(c["name"], c["args"]) for c in streamed.tool_calls] == [("get_weather", {"city": "Rome"})]
    [invalid] = streamed.invalid_tool_calls
    assert invalid["args"] == 'get_weather(city="Oslo")'  # what the model wrote, as invoke has it
    assert streamed.content == 'Checking both.\n\n<tool_call>get_weather(city="Oslo")</tool_call>'
    unknown = added(answered(UNKNOWN_TOOL)[1])
    assert unknown.tool_calls == [] and [c["name"] for c in unknown.invalid_tool_calls] == ["launch_rockets"]
    assert json.loads(unknown.invalid_tool_calls[0]["args"]) == '{"name": "launch_rockets", "arguments": {}}'


@pytest.mark.parametrize("text, shown", [(TEXT_THEN_CALL, "Let me check."), (ANSWER, ANSWER)])
def test_text_that_is_not_a_call_streams_as_it_is_written(answered, text, shown):
    chunks = answered(text)[1]
    early = [chunk for chunk in chunks[:-1] if chunk.content]
    assert len(early) > 1 and "".join(chunk.content for chunk in early) == shown  # token by token
    assert not any(chunk.tool_call_chunks for chunk in chunks[:-1])  # the calls come with the last chunk


def test_astream_adds_up_to_invoke(smollm, answered):
    llm = smollm.bind_tools([TOOL], grammar=exactly(GOOD_AND_UNREADABLE))

    async def collect():
        return [chunk async for chunk in llm.astream(QUESTION)]

    assert_same_message(added(asyncio.run(collect())), answered(GOOD_AND_UNREADABLE)[0])


class ScriptedTurns(AgentMiddleware):
    """Each model turn of the agent decodes under a grammar that admits one text: the next one."""

    def __init__(self, texts: list[str]):
        super().__init__()
        self.texts = list(texts)

    def wrap_model_call(self, request, handler):
        settings = {**request.model_settings, "grammar": exactly(self.texts.pop(0))}
        return handler(request.override(model_settings=settings))


def run_agent(smollm, texts: list[str], *, stream: bool) -> tuple[list, list[AIMessageChunk]]:
    """The agent's final messages, and the model's streamed chunks (none when not streamed)."""
    graph = create_agent(smollm, [TOOL], middleware=[ScriptedTurns(texts)])
    question = {"messages": [HumanMessage(QUESTION)]}
    if not stream:
        return graph.invoke(question)["messages"], []
    chunks, state = [], None
    for mode, data in graph.stream(question, stream_mode=["messages", "values"]):
        if mode == "values":
            state = data
        elif data[1]["langgraph_node"] == "model":
            chunks.append(data[0])
    return state["messages"], chunks


def test_create_agent_streams_a_call_its_result_and_the_answer(smollm):
    invoked, _ = run_agent(smollm, [TEXT_THEN_CALL, ANSWER], stream=False)
    streamed, chunks = run_agent(smollm, [TEXT_THEN_CALL, ANSWER], stream=True)
    assert [type(m).__name__ for m in streamed] == [type(m).__name__ for m in invoked] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    for mine, theirs in zip(streamed[1::2], invoked[1::2], strict=True):
        assert_same_message(mine, theirs)
    call, result = streamed[1].tool_calls[0], streamed[2]
    assert isinstance(result, ToolMessage) and result.tool_call_id == call["id"] and "sunny" in result.content
    assert streamed[-1].content == ANSWER
    assert "".join(chunk.content for chunk in chunks) == "Let me check." + ANSWER  # no call text streamed
    assert len([chunk for chunk in chunks if chunk.content]) > 2


def test_create_agent_keeps_an_invalid_call_of_a_streamed_answer(smollm):
    invoked, _ = run_agent(smollm, [UNKNOWN_TOOL], stream=False)
    streamed, _ = run_agent(smollm, [UNKNOWN_TOOL], stream=True)
    assert len(streamed) == len(invoked) == 2  # no call to run: the agent ends, as without streaming
    assert_same_message(streamed[-1], invoked[-1])
    assert [c["name"] for c in streamed[-1].invalid_tool_calls] == ["launch_rockets"]
