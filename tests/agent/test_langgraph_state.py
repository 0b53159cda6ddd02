"""The global-plan agent inside LangGraph (issue 26): a node of a ``MessagesState`` graph (messages in,
an AI message out, the plan and results still in the output), and a tool of ``create_agent`` through
``as_tool()`` (a request in, the answer as text out)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.errors import AgentInputError

from .conftest import ReplayModel, script
from .test_global_plan import caption_plan, make_agent

def agent_for(llm, tools, tmp_path) -> GlobalPlanAgent:
    return make_agent(llm, tools, tmp_path)


def plan_for(image) -> list[dict[str, Any]]:
    return caption_plan(image)


class FilesState(MessagesState):
    files: list[str]


def test_the_agent_is_a_node_of_a_messages_state_graph(tools, recorder, tmp_path, image):
    llm = script(plan_for(image), "It shows a cat; I read the caption aloud.")
    graph = StateGraph(FilesState)
    graph.add_node("hugginggpt", agent_for(llm, tools, tmp_path))
    graph.add_edge(START, "hugginggpt")
    graph.add_edge("hugginggpt", END)
    history = [HumanMessage("hi"), AIMessage("Hello! What can I do?")]
    state = graph.compile().invoke({"messages": [*history, HumanMessage("Caption cat.png and read it aloud")],
                                    "files": [str(image)]})
    answer = state["messages"][-1]
    assert isinstance(answer, AIMessage) and answer.content == "It shows a cat; I read the caption aloud."
    assert len(state["messages"]) == 4  # the graph's reducer appended the one answer
    assert [c["task"] for c in recorder.calls] == ["image-to-text", "text-to-speech"]  # the plan ran
    planning_prompt = " ".join(str(m.content) for m in llm.prompts[0])
    assert "Caption cat.png and read it aloud" in planning_prompt and "Hello! What can I do?" in planning_prompt


def test_messages_in_give_messages_out_with_plan_and_results(tools, tmp_path, image):
    llm = script(plan_for(image), "Done.")
    out = agent_for(llm, tools, tmp_path).invoke({"messages": [("user", "Caption it and read it aloud")],
                                                  "files": [str(image)]})
    assert [m.content for m in out["messages"]] == ["Done."] and out["output"] == "Done."
    assert [s["task"] for s in out["plan"]] == ["image-to-text", "text-to-speech"]
    assert out["results"][1]["status"] == "ok" and out["selections"][0]["model"] == "org/cap"
    plain = agent_for(script(plan_for(image), "Done."), tools, tmp_path).invoke(
        {"input": "Caption it and read it aloud", "files": [str(image)]})
    assert "messages" not in plain  # only a messages state gets messages back


@pytest.mark.parametrize("messages, error", [
    ([AIMessage("I am an assistant")], "no human message"),
    ([], "no human message"),
    ([HumanMessage("   ")], "no text"),
    ([{"role": "nobody", "content": "x"}], "messages:"),
])
def test_a_messages_state_without_a_request_is_refused(tools, tmp_path, messages, error):
    with pytest.raises(AgentInputError, match=error):
        agent_for(script(), tools, tmp_path).invoke({"messages": messages})


def test_as_tool_takes_a_request_and_returns_the_answer_text(tools, recorder, tmp_path, image):
    tool = agent_for(script(plan_for(image), "It shows a cat."), tools, tmp_path).as_tool(
        name="hugginggpt", description="Solve multi-step AI requests with Hugging Face models.")
    assert tool.name == "hugginggpt" and set(tool.args) == {"request", "files"}
    assert tool.tool_call_schema.model_json_schema()["required"] == ["request"]
    assert tool.invoke({"request": "Caption it and read it aloud", "files": [str(image)]}) == "It shows a cat."
    assert [c["task"] for c in recorder.calls] == ["image-to-text", "text-to-speech"]


def test_as_tool_inside_create_agent(tools, recorder, tmp_path, image):
    class ToolCallingModel(ReplayModel):
        def bind_tools(self, tools, **kwargs):
            return self

    tool = agent_for(script(plan_for(image), "It shows a cat."), tools, tmp_path).as_tool()
    call = {"name": tool.name, "args": {"request": "Caption it and read it aloud", "files": [str(image)]},
            "id": "c1", "type": "tool_call"}
    model = ToolCallingModel(responses=[AIMessage("", tool_calls=[call]), AIMessage("The picture shows a cat.")])
    state = create_agent(model, [tool]).invoke({"messages": [("user", "What is in cat.png? Say it aloud.")]})
    [observation] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert observation.content == "It shows a cat." and observation.status == "success"
    assert state["messages"][-1].content == "The picture shows a cat."
