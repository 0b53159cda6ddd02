"""Issue 23: a weak controller cannot hold the model for minutes. Each LLM call is bounded by what its
answer can need, and when an answer is cut at its bound (or the embedded model stops it for repeating
itself) the trace and the stage events say so.

The controller here is a stand-in with a ``max_tokens`` setting, as the real chat models have: it
records the bound each call ran under, and answers as a weak model would (cut off, or repeating).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from PIL import Image
from pydantic import Field

from hugginggpt.agent import FunctionCallingAgent, GlobalPlanAgent, ReActAgent
from hugginggpt.llm.token_limits import (
    RESPONSE_MAX_TOKENS,
    TURN_MAX_TOKENS,
    bounded,
    selection_max_tokens,
    token_limit,
)
from tests.agent.conftest import Card, Recorder, catalog_of, make_tools


class WeakController(BaseChatModel):
    """Answers by the stage its call is tagged with (``plan``, ``selection``, ``response``; untagged:
    an agent turn); ``finish`` says how each stage's answer ends. ``calls``: (stage, the bound it ran under)."""

    max_tokens: int | None = 4096
    plan: list[dict[str, Any]] = Field(default_factory=list)
    finish: dict[str, str] = Field(default_factory=dict)
    calls: list[tuple[str, int | None]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "weak-controller"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tool_names=[getattr(t, "name", "") for t in tools])

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        tags = set(run_manager.tags if run_manager else ())
        stage = next((t for t in ("plan", "selection", "response") if t in tags), "agent")
        self.calls.append((stage, self.max_tokens))
        text = {"plan": json.dumps(self.plan),
                "selection": '{"0": {"id": "org/b", "reason": "it is the very very very very',
                "response": "The picture shows a cat. The picture shows a cat. The picture shows a cat.",
                }.get(stage, "Thought: nothing to do\nFinal Answer: a cat")
        message = AIMessage(text, response_metadata={"finish_reason": self.finish.get(stage, "stop")})
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture
def tools() -> dict[str, Any]:
    return make_tools(Recorder())


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "inputs" / "cat.png"
    path.parent.mkdir()
    Image.new("RGB", (8, 8), (220, 10, 10)).save(path)
    return path


def _cut_offs(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "llm_cut_off"]


def test_bounded_takes_the_smaller_limit_and_keeps_a_chat_model():
    from hugginggpt.llm.llamacpp import LlamaCppChatModel

    llm = LlamaCppChatModel(model_path="/nowhere/model.gguf", max_tokens=1024)
    assert token_limit(bounded(llm, 64)) == 64 and token_limit(llm) == 1024
    assert bounded(llm, 4096) is llm  # its own limit is already smaller
    assert isinstance(bounded(llm, 64), LlamaCppChatModel)  # with_structured_output, bind_tools keep the bound
    assert token_limit(bounded(LlamaCppChatModel(model_path="/m.gguf", max_tokens=None), 99)) == 99
    # a call's own max_tokens: the smaller of the model's and the call's
    assert llm._params(None, {"max_tokens": 64})["max_tokens"] == 64
    assert llm._params(None, {"max_tokens": 9999})["max_tokens"] == 1024
    assert llm._params(None, {})["max_tokens"] == 1024
    structured = llm.with_structured_output({"type": "object", "properties": {"a": {"type": "string"}}},
                                            max_tokens=32)
    assert structured.first.kwargs["max_tokens"] == 32


async def test_selection_and_response_are_bounded_and_say_when_cut(tmp_path, tools, image):
    """Before: selection and response ran under the model's own limit (1024 for the embedded model,
    none for a hosted one), and nothing but a finish_reason in the trace said an answer was cut."""
    plan = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": str(image)}}]
    llm = WeakController(plan=plan, finish={"selection": "length", "response": "repetition"})
    catalog = catalog_of([Card("org/a", "image-to-text", 3), Card("org/b", "image-to-text", 2)])
    agent = GlobalPlanAgent(llm, [tools["image-to-text"]], catalog, workspace_root=tmp_path / "runs", structured=False)
    events = [e async for e in agent.astream_stage_events({"input": "What is in the picture?", "files": [str(image)]})]
    assert dict(llm.calls[1:]) == {"selection": selection_max_tokens(1), "response": RESPONSE_MAX_TOKENS}
    cut = _cut_offs(events)
    assert [(e["stage"], e["finish_reason"], e["max_tokens"]) for e in cut] == [
        ("selection", "length", selection_max_tokens(1)), ("response", "repetition", RESPONSE_MAX_TOKENS)]
    assert "cut off at its token bound of 112 tokens" in cut[0]["note"]
    assert "repeating itself" in cut[1]["note"]
    names = [e["event"] for e in events]
    assert names.index("llm_cut_off") < names.index("selection")  # said before the stage's own event
    output = events[-1]["output"]
    assert output["selections"][0]["model"] in ("org/a", "org/b")  # a cut selection still selects
    trace = json.loads(open(output["trace"]).read())
    recorded = {c["stage"]: (c["finish_reason"], c.get("max_tokens")) for c in trace["llm_calls"]}
    assert recorded["selection"] == ("length", 112) and recorded["response"] == ("repetition", RESPONSE_MAX_TOKENS)
    assert [e["event"] for e in trace["events"]].count("llm_cut_off") == 2


async def test_agent_turns_are_bounded_and_say_when_cut(tmp_path, tools):
    for make in (ReActAgent, FunctionCallingAgent):
        llm = WeakController(finish={"agent": "length"})
        agent = make(llm, [tools["image-to-text"]], workspace_root=tmp_path / "runs")
        events = [e async for e in agent.astream_stage_events("Describe nothing")]
        assert llm.calls == [("agent", TURN_MAX_TOKENS)], make.__name__
        cut = _cut_offs(events)
        assert [(e["stage"], e["finish_reason"], e["max_tokens"]) for e in cut] == [("agent", "length", 1024)]
