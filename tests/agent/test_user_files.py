"""The user's own files by relative path, as a user writes it (issue 26, part 1).

Each test runs from a folder holding ``examples/example.jpg``, as the README's snippets do. A
relative path means what it means in a shell; confinement stays: what the caller hands in is
allowed, what a model invents is not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from PIL import Image

from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.errors import ResourceError
from hugginggpt.tools import Workspace, build_tools

from .conftest import Card, PictureExecutor, ReplayModel, catalog_of, script


class ToolCallingModel(ReplayModel):
    def bind_tools(self, tools, **kwargs):
        return self


def call(name: str, call_id: str, **args) -> dict:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """The user's folder, the current directory: ``examples/example.jpg`` (8x6, red), a photo that
    nobody allowed (``private/secret.jpg``) and one more next to the allowed one."""
    folder = tmp_path / "project"
    (folder / "examples").mkdir(parents=True)
    (folder / "private").mkdir()
    Image.new("RGB", (8, 6), (220, 10, 10)).save(folder / "examples" / "example.jpg")
    Image.new("RGB", (5, 5), (220, 10, 10)).save(folder / "examples" / "other.jpg")
    Image.new("RGB", (3, 3), (220, 10, 10)).save(folder / "private" / "secret.jpg")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HUGGINGGPT_HOME", str(tmp_path / "runs"))
    return folder


# ------------------------------------------------------------------ a tool called from Python


def test_a_tool_called_from_python_reads_the_callers_relative_path(project):
    tools = build_tools(["image-to-text", "text-to-speech"], executor=PictureExecutor())
    assert tools[0].invoke({"image": "examples/example.jpg"}) == {"text": "a 8x6 red picture"}
    assert tools[0].invoke({"image": "./examples/../examples/example.jpg"}) == {"text": "a 8x6 red picture"}


def test_a_tool_called_from_python_still_refuses_what_is_no_regular_file(project):
    (tool,) = build_tools(["image-to-text"], executor=PictureExecutor())
    with pytest.raises(ResourceError, match="argument 'image': file not found: examples/nope.jpg"):
        tool.invoke({"image": "examples/nope.jpg"})
    with pytest.raises(ResourceError, match="not a regular file: examples"):
        tool.invoke({"image": "examples"})
    with pytest.raises(ResourceError, match="not a regular file: /dev/zero"):
        tool.invoke({"image": "/dev/zero"})
    with pytest.raises(ResourceError, match="unresolved reference"):
        tool.invoke({"image": "<resource>-0"})


def test_a_workspace_in_the_config_allows_the_input_by_the_callers_spelling(project, tmp_path, monkeypatch):
    (tool,) = build_tools(["image-to-text"], executor=PictureExecutor())
    ws = Workspace(inputs=["examples/example.jpg"])
    assert ws.inputs == ((project / "examples" / "example.jpg").resolve(),)
    config = {"configurable": {"hf_model": "Salesforce/blip-image-captioning-base", "workspace": ws}}
    assert tool.invoke({"image": "examples/example.jpg"}, config=config) == {"text": "a 8x6 red picture"}
    assert tool.invoke({"image": "example.jpg"}, config=config) == {"text": "a 8x6 red picture"}  # as before
    # The spelling stays the caller's at the time it allowed the file, wherever the program goes next.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert tool.invoke({"image": "examples/example.jpg"}, config=config) == {"text": "a 8x6 red picture"}
    monkeypatch.chdir(project)
    # The workspace confines: the photo next to the allowed one, or one elsewhere, is refused.
    for name in ("examples/other.jpg", "private/secret.jpg", "other.jpg"):
        with pytest.raises(ResourceError, match=f"file not found: {name}"):
            tool.invoke({"image": name}, config=config)
    for name in ("examples/../private/secret.jpg", str(project / "private" / "secret.jpg")):
        with pytest.raises(ResourceError, match="escapes the allowed folders"):
            tool.invoke({"image": name}, config=config)


def test_an_allowed_folder_by_its_relative_name(project):
    ws = Workspace(inputs=["examples"])
    assert ws.resolve("examples/other.jpg", "image") == (project / "examples" / "other.jpg").resolve()
    assert ws.resolve("other.jpg", "image") == (project / "examples" / "other.jpg").resolve()
    with pytest.raises(ResourceError, match="file not found"):
        ws.resolve("private/secret.jpg", "image")


def test_a_workspace_given_to_build_tools_confines_python_calls_too(project, tmp_path):
    ws = Workspace(tmp_path / "run")
    (tool,) = build_tools(["image-to-text"], executor=PictureExecutor(), workspace=ws)
    with pytest.raises(ResourceError, match="file not found: examples/example.jpg"):
        tool.invoke({"image": "examples/example.jpg"})
    (tool,) = build_tools(["image-to-text"], executor=PictureExecutor(), workspace=ws, allow=["examples"])
    assert tool.invoke({"image": "examples/example.jpg"}) == {"text": "a 8x6 red picture"}
    assert ws.inputs == ((project / "examples").resolve(),)


def test_tool_run_as_legacy_executors_call_it_is_confined(project):
    """``BaseTool.run`` is how model-driven frameworks without tool calls (legacy AgentExecutor,
    smolagents' bridge) call a tool: only ``invoke`` with plain arguments is the program's own call."""
    (tool,) = build_tools(["image-to-text"], executor=PictureExecutor(), handle_tool_error=False)
    with pytest.raises(ResourceError, match="file not found: private/secret.jpg"):
        tool.run({"image": "private/secret.jpg"})


# ------------------------------------------------------------------ tools under create_agent


def test_create_agent_reads_the_files_allowed_with_build_tools(project):
    tools = build_tools(["image-to-text"], executor=PictureExecutor(), allow=["examples/example.jpg"])
    model = ToolCallingModel(responses=[
        AIMessage("", tool_calls=[call("image-to-text", "c1", image="examples/example.jpg"),
                                  call("image-to-text", "c2", image="private/secret.jpg"),  # invented by the model
                                  call("image-to-text", "c3", image=str(project / "private" / "secret.jpg"))]),
        AIMessage("A red picture."),
    ])
    state = create_agent(model, tools=tools).invoke({"messages": [("user", "Describe examples/example.jpg")]})
    messages = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert messages["c1"].status == "success" and messages["c1"].content == "text: a 8x6 red picture"
    assert messages["c2"].status == "error" and "file not found: private/secret.jpg" in messages["c2"].content
    assert messages["c3"].status == "error" and "escapes the allowed folders" in messages["c3"].content
    assert state["messages"][-1].content == "A red picture."


def test_create_agent_without_allowed_files_refuses_and_says_how_to_allow(project):
    tools = build_tools(["image-to-text"], executor=PictureExecutor())
    model = ToolCallingModel(responses=[
        AIMessage("", tool_calls=[call("image-to-text", "c1", image="examples/example.jpg")]),
        AIMessage("I cannot read it."),
    ])
    state = create_agent(model, tools=tools).invoke({"messages": [("user", "Describe examples/example.jpg")]})
    (message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert message.status == "error"
    assert "file not found: examples/example.jpg" in message.content and "build_tools(allow=[...])" in message.content


# ------------------------------------------------------------------ the global-plan agent


def test_a_global_plan_run_reads_the_files_the_caller_gave_by_relative_path(project, tmp_path):
    tools = build_tools(["image-to-text", "text-to-speech"], executor=PictureExecutor())
    catalog = catalog_of([Card("org/cap", "image-to-text", 3), Card("org/tts", "text-to-speech", 4)])
    plan = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "examples/example.jpg"}},
            {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}]
    llm = script(plan, "It is a red picture; I read the caption aloud.")
    agent = GlobalPlanAgent(llm, tools, catalog, workspace_root=tmp_path / "runs")
    out = agent.invoke({"input": "Describe example.jpg, then read the description aloud",
                        "files": ["examples/example.jpg"], "chat_history": []})
    assert "- examples/example.jpg" in llm.prompts[0][-1].content  # the prompt shows the caller's spelling
    assert out["results"][0] == {"task": "image-to-text", "status": "ok", "result": {"text": "a 8x6 red picture"},
                                 "error": None}
    assert out["results"][1]["status"] == "ok" and Path(out["results"][1]["result"]["audio"]).is_file()
    assert json.loads(Path(out["trace"]).read_text())["files"] == ["examples/example.jpg"]


def test_a_global_plan_run_refuses_a_file_the_caller_did_not_give(project, tmp_path):
    tools = build_tools(["image-to-text"], executor=PictureExecutor())
    catalog = catalog_of([Card("org/cap", "image-to-text", 3)])
    plan = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "private/secret.jpg"}}]
    llm = script(plan, "Could not read it.")
    agent = GlobalPlanAgent(llm, tools, catalog, workspace_root=tmp_path / "runs")
    # the request names the file (so the plan may read it) but the caller gave only example.jpg
    out = agent.invoke({"input": "Describe example.jpg and private/secret.jpg", "files": ["examples/example.jpg"]})
    assert out["results"][0]["status"] != "ok"
    assert "file not found: private/secret.jpg" in out["results"][0]["error"]


def test_a_react_run_reads_the_files_the_caller_gave_by_relative_path(project, tmp_path):
    from hugginggpt.agent import ReActAgent

    from .test_react import ScriptedTextModel

    tools = build_tools(["image-to-text"], executor=PictureExecutor())
    turns = ['Action: image-to-text\nAction Input: {"image": "examples/example.jpg"}',
             'Action: image-to-text\nAction Input: {"image": "examples/other.jpg"}',  # not given: refused
             "Final Answer: a red picture"]
    agent = ReActAgent(ScriptedTextModel(responses=[AIMessage(t) for t in turns]), tools,
                       workspace_root=tmp_path / "runs")
    out = agent.invoke({"input": "Describe examples/example.jpg", "files": ["examples/example.jpg"]})
    assert out["results"][0]["status"] == "ok" and out["results"][0]["result"]["text"] == "a 8x6 red picture"
    assert out["results"][1]["status"] == "failed" and "file not found: examples/other.jpg" in out["results"][1]["error"]
