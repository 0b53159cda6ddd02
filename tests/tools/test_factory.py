"""build_tools(): one StructuredTool per task, running calls through an executor end to end."""

from __future__ import annotations

import threading
import wave
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from PIL import Image

from hugginggpt.errors import (
    InvalidArgumentsError,
    ModelLoadError,
    ResourceError,
    TaskError,
    UnknownTaskError,
)
from hugginggpt.tools import build_tools, get_task, task_table
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.factory import tool_description
from hugginggpt.tools.resources import Workspace

from .conftest import write_png


def _tool(name, executor, **kwargs):
    (tool,) = build_tools([name], executor=executor, **kwargs)
    return tool


def test_one_tool_per_task_by_default():
    tools = build_tools()
    assert [t.name for t in tools] == list(task_table())
    qa = next(t for t in tools if t.name == "question-answering")
    assert qa.args_schema.__name__ == "QuestionAnswering"
    assert set(qa.args) == {"question", "context"}
    assert qa.description.startswith(get_task("question-answering").description)


def test_description_summarises_arguments():
    text = tool_description(get_task("image-segmentation"))
    assert "image (image)" in text
    assert "subtask (semantic | instance | panoptic, optional)" in text
    assert "Returns: text, image, data." in text
    assert "top_k (integer, optional, default 5)" in tool_description(get_task("image-classification"))


def test_unknown_task_is_rejected():
    with pytest.raises(UnknownTaskError, match="did you mean"):
        build_tools(["text-clasification"])


def test_text_task_gets_defaults_model_and_workspace(toy_executor, run_workspace):
    tool = _tool("text-classification", toy_executor, workspace=run_workspace)
    result = tool.invoke({"text": "HELLO"}, config={"configurable": {"hf_model": "org/shouty"}})
    assert result == {"text": "SHOUTING", "data": [{"label": "SHOUTING", "score": 1.0}]}
    (call,) = toy_executor.calls
    assert isinstance(call, TaskCall)
    assert call.args == {"text": "HELLO", "top_k": 1}
    assert call.model == "org/shouty" and call.workspace is run_workspace


def test_config_workspace_overrides_the_built_in_one(toy_executor, run_workspace, tmp_path):
    other = Workspace(root=tmp_path / "other")
    tool = _tool("text-to-image", toy_executor, workspace=run_workspace)
    result = tool.invoke({"text": "a blue square"}, config={"configurable": {"workspace": other}})
    image = Path(result["image"])
    assert image.is_relative_to(other.root)
    with Image.open(image) as img:
        assert img.getpixel((0, 0)) == (0, 0, 255)


def test_image_argument_is_resolved_to_a_checked_local_file(toy_executor, run_workspace):
    picture = write_png(run_workspace.root / "green.png", "green")
    tool = _tool("image-classification", toy_executor, workspace=run_workspace)
    result = tool.invoke({"image": "green.png", "top_k": 2})
    assert result["text"] == "green" and len(result["data"]) == 2
    assert toy_executor.calls[0].args["image"] == picture.resolve()
    assert isinstance(toy_executor.calls[0].args["image"], Path)


def test_object_detection_writes_a_new_image_in_the_workspace(toy_executor, run_workspace):
    picture = write_png(run_workspace.root / "scene.png", "red", size=(32, 32), box=(4, 6, 12, 20))
    tool = _tool("object-detection", toy_executor, workspace=run_workspace)
    result = tool.invoke({"image": str(picture)})
    assert result["data"][0]["box"] == {"xmin": 4, "ymin": 6, "xmax": 13, "ymax": 21}
    drawn = Path(result["image"])
    assert drawn.is_relative_to(run_workspace.root) and drawn != picture
    with Image.open(drawn) as img:
        assert img.size == (32, 32)


async def test_async_invoke_writes_real_audio(toy_executor, run_workspace):
    tool = _tool("text-to-speech", toy_executor)
    result = await tool.ainvoke({"text": "hello"}, config={"configurable": {"workspace": run_workspace}})
    with wave.open(result["audio"]) as audio:
        assert audio.getframerate() == 16000 and audio.getnframes() == 800


async def test_async_invoke_uses_the_executor_coroutine(run_workspace):
    class AsyncOnly(Executor):
        def can_run(self, task, model):
            return True

        def run(self, call):
            raise AssertionError("the async path must not block on run()")

        async def arun(self, call):
            return {"text": call.args["text"][::-1]}

    tool = _tool("summarization", AsyncOnly(), workspace=run_workspace)
    assert await tool.ainvoke({"text": "abc"}) == {"text": "cba"}


def test_http_url_is_downloaded_into_the_workspace(toy_executor, tmp_path):
    run_workspace = Workspace(root=tmp_path / "run", allow_private_urls=True)  # the server is on 127.0.0.1
    served = tmp_path / "served"
    write_png(served / "blue.png", "blue")
    handler = partial(SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/blue.png"
        result = _tool("image-classification", toy_executor, workspace=run_workspace).invoke({"image": url})
    finally:
        server.shutdown()
        server.server_close()
    assert result["text"] == "blue"
    assert toy_executor.calls[0].args["image"].is_relative_to(run_workspace.root)


def test_unresolved_reference_is_a_resource_error(toy_executor, run_workspace):
    tool = _tool("image-classification", toy_executor, workspace=run_workspace)
    with pytest.raises(ResourceError, match="image-classification: argument 'image': unresolved reference") as info:
        tool.invoke({"image": "<resource>-2"})
    assert info.value.task == "image-classification"
    assert toy_executor.calls == []


def test_file_outside_the_workspace_is_refused(toy_executor, run_workspace, tmp_path):
    outside = write_png(tmp_path / "elsewhere" / "secret.png")
    tool = _tool("image-classification", toy_executor, workspace=run_workspace)
    with pytest.raises(ResourceError, match="image-classification: argument 'image': .*escapes"):
        tool.invoke({"image": str(outside)})


def test_wrong_arguments_raise_a_typed_error_naming_them(toy_executor, run_workspace):
    tool = _tool("question-answering", toy_executor, workspace=run_workspace)
    with pytest.raises(InvalidArgumentsError) as info:
        tool.invoke({"question": "Who?", "contxt": "Ann did."})
    message = str(info.value)
    assert message.startswith("question-answering: invalid arguments")
    assert "context: required argument missing" in message and "contxt: unknown argument" in message


def test_agents_get_errors_as_observations(toy_executor, run_workspace):
    tool = _tool("question-answering", toy_executor, workspace=run_workspace, handle_tool_error=True)
    message = tool.invoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": {"question": "Who?"}})
    assert isinstance(message, ToolMessage) and message.status == "error"
    assert "context: required argument missing" in message.content


def test_tool_call_returns_short_text_and_the_envelope_as_artifact(toy_executor, run_workspace):
    tool = _tool("question-answering", toy_executor, workspace=run_workspace)
    context = "The sky is blue. Ann baked the cake. Rome is old."
    message = tool.invoke({"type": "tool_call", "id": "c1", "name": tool.name,
                           "args": {"question": "Who baked the cake?", "context": context}})
    assert message.artifact["text"] == "Ann baked the cake" and message.status == "success"
    assert message.content.startswith("text: Ann baked the cake")  # the model reads a short text


def test_executor_errors_stay_typed_and_name_the_task(toy_executor, run_workspace):
    tool = _tool("text-classification", toy_executor, workspace=run_workspace)
    with pytest.raises(ModelLoadError, match="text-classification: model 'missing/model'"):
        tool.invoke({"text": "x"}, config={"configurable": {"hf_model": "missing/model"}})

    class Broken(Executor):
        def can_run(self, task, model):
            return True

        def run(self, call):
            return {"text": "ok", "image": "relative.png"}

    with pytest.raises(ResourceError, match="absolute file path"):
        _tool("text-classification", Broken(), workspace=run_workspace).invoke({"text": "x"})

    class Buggy(Broken):
        def run(self, call):
            raise ZeroDivisionError("division by zero")

    with pytest.raises(TaskError, match="text-classification: ZeroDivisionError: division by zero"):
        _tool("text-classification", Buggy(), workspace=run_workspace).invoke({"text": "x"})


def test_building_tools_needs_no_executor_until_a_call():
    (tool,) = build_tools(["summarization"])
    assert tool.name == "summarization"  # the default executor is created on the first call only


# ------------------------------------------------------------------ the result envelope

def test_envelope_makes_paths_absolute_and_rejects_non_json(tmp_path, monkeypatch):
    from hugginggpt.tools.results import envelope

    monkeypatch.chdir(tmp_path)
    result = envelope(text="a cat", image="out.png", data={"score": 0.5})
    assert result == {"text": "a cat", "image": str(tmp_path / "out.png"), "data": {"score": 0.5}}
    with pytest.raises(ResourceError, match="demo: the result is not JSON data"):
        envelope(data={"x": object()}, task="demo")
    with pytest.raises(ResourceError, match="non-empty"):
        envelope()
    with pytest.raises(ResourceError, match="not JSON"):
        envelope(data=[float("nan")])


def test_resource_value_by_argument_kind():
    from hugginggpt.tools import resource_value

    result = {"text": "two cats", "image": "/run/outputs/a.png", "data": [{"label": "cat"}]}
    assert resource_value(result, "image") == "/run/outputs/a.png"
    assert resource_value(result, "text") == "two cats"
    assert resource_value({"data": [{"label": "cat"}]}, "text") == '[{"label":"cat"}]'
    with pytest.raises(ResourceError, match="no audio output"):
        resource_value(result, "audio")
    with pytest.raises(ResourceError, match="no text output"):
        resource_value({"audio": "/a.wav"}, "text")


def test_summarize_shortens_long_data():
    from hugginggpt.tools.results import summarize

    embedding = {"data": [[0.123456789] * 768]}
    text = summarize(embedding, limit=200)
    assert "760 more" in text and "0.1235" in text and len(text) <= 206
    assert summarize({"text": "x" * 50}, limit=10) == "text: " + "x" * 9 + "…"
    assert summarize({"image": "/a.png", "text": "hi"}) == "text: hi; image: /a.png"


def test_tool_can_run_asks_its_executor(toy_executor):
    (tool,) = build_tools(["text-classification"], executor=toy_executor)
    assert tool.can_run("any/model") is True
    assert tool.can_run("missing/model") is False
