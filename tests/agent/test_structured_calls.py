"""Structured output through each model's own ``with_structured_output(include_raw=True)`` chain.

The constraint the model chose (a forced tool, OpenAI's json_schema response format, llama.cpp's
grammar) reaches the model, callbacks see the LLM call, an unparsable answer comes back as the
chain gives it, and each schema is built once per agent.
"""

import json
from operator import itemgetter
from typing import Any

import pytest
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers import JsonOutputParser
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableMap, RunnablePassthrough
from pydantic import Field

from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.llm.json_text import find_json
from hugginggpt.llm.structured import ConstrainedCache, StructuredLLM
from hugginggpt.errors import LLMError

from .conftest import CallLog, script

SCHEMA = {"title": "answer", "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class ToolCallingChat(BaseChatModel):
    """Answers with a call of the first bound tool (LangChain's default structured output uses one)."""

    args: dict[str, Any] = Field(default_factory=dict)
    seen_kwargs: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "tool-calling-test"

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        return self.bind(tools=[t["title"] for t in tools], tool_choice=tool_choice, **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen_kwargs.append(kwargs)
        call = {"name": kwargs["tools"][0], "args": self.args, "id": "call-1", "type": "tool_call"}
        return ChatResult(generations=[ChatGeneration(message=AIMessage("", tool_calls=[call]))])


async def test_the_forced_tool_of_the_default_chain_reaches_the_model():
    llm = ToolCallingChat(args={"n": 7})
    structured = StructuredLLM(llm.with_structured_output(SCHEMA, method="json_schema", include_raw=True))
    log = CallLog()
    answer = await structured.ainvoke([HumanMessage("seven")], {"callbacks": [log]})
    assert answer["parsed"] == {"n": 7} and answer["parsing_error"] is None
    assert isinstance(answer["raw"], AIMessage) and answer["raw"].tool_calls[0]["args"] == {"n": 7}
    assert llm.seen_kwargs == [{"tools": ["answer"], "tool_choice": "any"}]
    assert [e for e in log.events if e[0] == "llm"] == [("llm", "chat")]  # callbacks see the one LLM call


def include_raw_chain(llm):
    """LangChain's include_raw shape (as langchain-core, langchain-openai and llamacpp.py build it)."""
    parsed = RunnablePassthrough.assign(parsed=itemgetter("raw") | JsonOutputParser(), parsing_error=lambda _: None)
    unparsed = RunnablePassthrough.assign(parsed=lambda _: None)
    return RunnableMap(raw=llm) | parsed.with_fallbacks([unparsed], exception_key="parsing_error")


async def test_an_unparsable_answer_gives_parsed_none_and_the_error_as_the_chain_does():
    short = await StructuredLLM(include_raw_chain(script("no JSON here"))).ainvoke([HumanMessage("x")], {})
    whole = await include_raw_chain(script("no JSON here")).ainvoke([HumanMessage("x")])
    assert short["parsed"] is None is whole["parsed"]
    assert short["raw"].content == whole["raw"].content == "no JSON here"
    assert type(short["parsing_error"]) is type(whole["parsing_error"]) is OutputParserException
    good = await StructuredLLM(include_raw_chain(script('{"n": 2}'))).ainvoke([HumanMessage("x")], {})
    assert good["parsed"] == {"n": 2} and good["parsing_error"] is None


async def test_a_chain_of_another_shape_is_invoked_whole():
    llm = script({"n": 1}, structured=True)  # its with_structured_output is ``self | parse``
    structured = StructuredLLM(llm.with_structured_output(SCHEMA, include_raw=True))
    assert (await structured.ainvoke([HumanMessage("one")], {}))["parsed"] == {"n": 1}


def test_the_cache_builds_a_keyed_schema_once_and_knows_its_llm():
    llm = ToolCallingChat()
    cache = ConstrainedCache(llm, "auto")
    built = []

    def schema():
        built.append(1)
        return SCHEMA

    first, second = cache.get(schema, key="k"), cache.get(schema, key="k")
    assert first is second and built == [1]
    assert cache.get(SCHEMA) is not first  # keyed by the schema's JSON: another entry
    assert cache.serves(llm, "auto") and not cache.serves(llm, True) and not cache.serves(ToolCallingChat(), "auto")
    assert ConstrainedCache(script(), "auto").get(SCHEMA) is None  # no structured output: plain text
    assert ConstrainedCache(llm, False).get(SCHEMA) is None
    with pytest.raises(LLMError, match="does not support structured output"):
        ConstrainedCache(script(), True).get(SCHEMA)


async def test_the_agent_builds_the_plan_schema_once_and_again_for_a_new_llm(tools, tmp_path):
    plan = [{"task": "echo", "id": 0, "args": {"text": "hi"}}]
    llm = script({"tasks": plan}, "One.", {"tasks": plan}, "Two.", structured=True)
    agent = GlobalPlanAgent(llm, [tools["echo"]], workspace_root=tmp_path / "runs")
    outputs = [await agent.ainvoke("shout hi"), await agent.ainvoke("shout hi")]
    assert [o["results"][0]["result"] for o in outputs] == [{"text": "HI"}] * 2
    assert [s["title"] for s in llm.schemas] == ["plan"]
    agent.llm = script({"tasks": plan}, "Three.", structured=True)
    assert (await agent.ainvoke("shout hi"))["output"] == "Three."
    assert [s["title"] for s in agent.llm.schemas] == ["plan"]


def test_a_whole_json_answer_takes_the_fast_path_but_keeps_the_lenient_rules():
    plan = [{"task": "echo", "id": 0}]
    assert find_json(json.dumps(plan), lambda v: isinstance(v, list)) == plan
    wrapped = json.dumps({"note": "x", "steps": plan})  # whole JSON, not accepted: an inner value is
    assert find_json(wrapped, lambda v: isinstance(v, list)) == plan
    fenced = '{"tasks": []}\n```json\n[{"task": "echo", "id": 1}]\n```'  # not one JSON value: fence first
    assert find_json(fenced, lambda v: isinstance(v, list)) == [{"task": "echo", "id": 1}]
    assert find_json("[1, 2,]") == [1, 2]  # trailing comma: the lenient path
