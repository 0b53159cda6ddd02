"""RemoteExecutor against a real local HTTP server that speaks the Inference API (tests/inference_server.py)."""

from __future__ import annotations

import json
import math
import socket
import struct
import threading
import wave
from pathlib import Path

import pytest
from PIL import Image

from hugginggpt.errors import RemoteInferenceError, ResourceError
from hugginggpt.tools.executors.base import TaskCall
from hugginggpt.tools.executors.remote import HANDLERS, RemoteExecutor
from hugginggpt.tools.resources import Workspace
from hugginggpt.tools.table import get_task, task_table
from tests.inference_server import InferenceServer


@pytest.fixture
def server():
    with InferenceServer() as srv:
        yield srv


@pytest.fixture
def ws(tmp_path):
    return Workspace(tmp_path / "run")


def call(task: str, ws: Workspace, model: str | None = None, **args) -> TaskCall:
    return TaskCall(task=get_task(task), args=args, workspace=ws, model=model)


def endpoint_for(server: InferenceServer, task: str, **kwargs) -> RemoteExecutor:
    kwargs.setdefault("backoff", 0.01)
    return RemoteExecutor(f"{server.url}/{task}", token="hf_testtoken123", **kwargs)


def png(path: Path, size=(40, 30), color=(255, 255, 255), box=None, box_color=(20, 20, 220)) -> Path:
    image = Image.new("RGB", size, color)
    if box:
        image.paste(Image.new("RGB", (box[2] - box[0], box[3] - box[1]), box_color), box[:2])
    image.save(path)
    return path


def tone_wav(path: Path, hertz: float = 440, seconds: float = 0.5, rate: int = 16000) -> Path:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(b"".join(struct.pack("<h", int(9000 * math.sin(2 * math.pi * hertz * i / rate)))
                                 for i in range(int(rate * seconds))))
    return path


def outputs_of(ws: Workspace) -> list[Path]:
    folder = ws.root / "outputs"
    return sorted(folder.iterdir()) if folder.exists() else []


# ------------------------------------------------------------------------------- task coverage


def test_every_remote_handler_is_a_table_task():
    assert set(HANDLERS) <= set(task_table())
    assert {"text-classification", "object-detection", "text-to-speech", "conversational"} <= set(HANDLERS)


def test_can_run_knows_its_tasks_and_refuses_local_folders(tmp_path):
    remote = RemoteExecutor(provider="hf-inference")
    assert remote.can_run("summarization", "facebook/bart-large-cnn")
    assert remote.can_run("summarization", None)
    assert not remote.can_run("time-series-forecasting", "amazon/chronos-t5-small")
    assert not remote.can_run("summarization", str(tmp_path))  # a local folder is not on any server
    template = RemoteExecutor("http://127.0.0.1:9/models/{model}")
    assert template.can_run("summarization", "acme/x") and not template.can_run("summarization", None)


# ------------------------------------------------------------------------------ real answers


def test_text_classification_on_an_endpoint_sends_the_token(server, ws):
    result = endpoint_for(server, "text-classification").run(
        call("text-classification", ws, text="I love this good movie", top_k=2))
    assert result["text"] == "POSITIVE"
    assert [item["label"] for item in result["data"]] == ["POSITIVE", "NEGATIVE"]
    assert server.requests[-1]["headers"]["authorization"] == "Bearer hf_testtoken123"


def test_summarization_through_a_model_id_in_an_endpoint_template(server, ws):
    remote = RemoteExecutor(server.url + "/models/{model}", token="hf_x", backoff=0.01)
    text = "The cat sat on the mat. Then it slept all afternoon. Nobody minded."
    result = remote.run(call("summarization", ws, model="acme/summarizer", text=text))
    assert result == {"text": "The cat sat on the mat."}
    assert server.requests[-1]["path"] == "/models/acme/summarizer"


def test_a_model_url_overrides_the_endpoint(server, ws):
    remote = RemoteExecutor("http://127.0.0.1:9/never-used", backoff=0.01)
    result = remote.run(call("summarization", ws, model=f"{server.url}/summarization", text="One. Two."))
    assert result["text"] == "One."


def test_provider_routing_by_hub_id(server, ws, monkeypatch):
    """hf-inference provider: the Hub id is checked against /api/models/<id>, then posted to the router."""
    from huggingface_hub import constants
    from huggingface_hub.inference._providers import PROVIDERS

    monkeypatch.setattr(constants, "ENDPOINT", server.url)  # the Hub API, for the model's pipeline tag
    monkeypatch.setattr(PROVIDERS["hf-inference"]["text-classification"], "base_url", server.url + "/hf-inference")
    remote = RemoteExecutor(provider="hf-inference", token="hf_x")
    result = remote.run(call("text-classification", ws, model="acme/sentiment-large", text="great"))
    assert result["text"] == "POSITIVE"
    assert server.requests[-1]["path"] == "/hf-inference/models/acme/sentiment-large"


def test_image_classification_reads_the_image(server, ws, tmp_path):
    image = png(tmp_path / "green.png", color=(10, 200, 30))
    result = endpoint_for(server, "image-classification").run(call("image-classification", ws, image=image))
    assert result["data"][0]["label"] == "green"
    assert result["text"].startswith("green (0.80)")


def test_object_detection_returns_boxes_and_a_drawn_image(server, ws, tmp_path):
    image = png(tmp_path / "scene.png", box=(10, 5, 20, 15))
    result = endpoint_for(server, "object-detection").run(call("object-detection", ws, image=image, threshold=0.5))
    assert result["data"][0]["box"] == {"xmin": 10, "ymin": 5, "xmax": 19, "ymax": 14}
    assert result["text"].startswith("1 objects: blob")
    drawn = Image.open(result["image"])
    assert drawn.size == (40, 30)
    assert drawn.getpixel((10, 5)) == (255, 0, 0)  # the box outline is drawn in red
    assert Path(result["image"]).parent == ws.root / "outputs"


def test_speech_recognition_hears_the_tone(server, ws, tmp_path):
    audio = tone_wav(tmp_path / "tone.wav", hertz=440)
    result = endpoint_for(server, "automatic-speech-recognition").run(
        call("automatic-speech-recognition", ws, audio=audio))
    assert result == {"text": "a tone of 440 hertz"}


def test_text_to_image_saves_a_png_in_the_workspace(server, ws):
    result = endpoint_for(server, "text-to-image").run(call("text-to-image", ws, text="a red square"))
    path = Path(result["image"])
    assert path.suffix == ".png" and path.is_relative_to(ws.root)
    with Image.open(path) as image:
        assert image.getpixel((0, 0)) == (220, 20, 20)
    assert outputs_of(ws) == [path]  # nothing else left behind


def test_text_to_speech_saves_a_wav(server, ws):
    result = endpoint_for(server, "text-to-speech").run(call("text-to-speech", ws, text="one two three four"))
    path = Path(result["audio"])
    assert path.suffix == ".wav"
    with wave.open(str(path)) as wav:
        assert wav.getframerate() == 16000
        assert wav.getnframes() == int(16000 * 0.05 * 4)


def test_feature_extraction_returns_the_vector(server, ws):
    result = endpoint_for(server, "feature-extraction").run(call("feature-extraction", ws, text="abba"))
    vector = result["data"]
    assert len(vector) == 26
    assert vector[0] == pytest.approx(vector[1]) == pytest.approx(math.sqrt(0.5), abs=1e-5)
    assert json.dumps(result)  # plain JSON, no numpy


def test_feature_extraction_from_a_server_that_answers_a_batch_is_one_vector(server, ws):
    """A TEI server answers one text with a batch of one pooled vector: the result is that vector."""
    result = endpoint_for(server, "tei-embed").run(call("feature-extraction", ws, text="abba"))
    assert len(result["data"]) == 26 and result["data"][0] == pytest.approx(math.sqrt(0.5), abs=1e-5)


def test_conversational_uses_chat_completions(server, ws):
    result = endpoint_for(server, "tgi").run(call("conversational", ws, text="hello"))
    assert result == {"text": "You said: hello"}
    assert server.requests[-1]["path"] == "/tgi/v1/chat/completions"


def test_fill_mask_writes_the_models_own_mask_token(server, ws, tmp_path, monkeypatch):
    """The LLM writes [MASK] for a model whose token is <mask>: the token is read from the model's
    tokenizer_config.json on the Hub (a local stand-in) and put in, so the server does not refuse the text."""
    from huggingface_hub import constants

    from hugginggpt.tools.executors import remote as remote_module
    from tests.hub_server import HubServer

    config = json.dumps({"mask_token": {"content": "<mask>", "lstrip": True}}).encode()
    remote = RemoteExecutor(f"{server.url}/models/{{model}}", backoff=0.01)
    monkeypatch.setattr(remote_module, "_MASK_TOKENS", {})
    with HubServer({"acme/roberta-masked": {"tokenizer_config.json": config}, "acme/bert-masked": {}}) as hub:
        monkeypatch.setattr(constants, "ENDPOINT", hub.url)
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                            hub.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
        result = remote.run(call("fill-mask", ws, model="acme/roberta-masked", text="A [mask] sat on the mat."))
        assert result["text"] == "A cat sat on the mat."
        assert json.loads(server.requests[-1]["body"])["inputs"] == "A <mask> sat on the mat."
        # a model whose config the Hub does not have gets the text as written; the server's refusal is reported
        with pytest.raises(RemoteInferenceError, match=r"400.*No mask_token \(\[MASK\]\)"):
            remote.run(call("fill-mask", ws, model="acme/bert-masked", text="A <mask> sat."))
    asked = len(hub.requests)
    remote.run(call("fill-mask", ws, model="acme/roberta-masked", text="A <MASK> sat."))
    assert len(hub.requests) == asked  # the token is read once a process


def test_missing_media_file_is_a_resource_error(server, ws, tmp_path):
    with pytest.raises(ResourceError, match="image file not found"):
        endpoint_for(server, "image-classification").run(
            call("image-classification", ws, image=tmp_path / "nope.png"))
    assert server.requests == []


# ------------------------------------------------------------------------------------ errors


def test_401_says_to_set_hf_token(server, ws):
    server.token = "hf_right"
    with pytest.raises(RemoteInferenceError) as info:
        endpoint_for(server, "summarization").run(call("summarization", ws, model="acme/x", text="a. b."))
    err = info.value
    assert err.status_code == 401 and err.task == "summarization"
    assert "HTTP 401 from" in str(err) and "HF_TOKEN" in str(err) and "acme/x" in str(err)
    assert "\n" not in str(err)
    assert len(server.requests) == 1  # not retried


def test_404_for_an_unknown_model(server, ws):
    remote = RemoteExecutor(server.url + "/models/{model}", backoff=0.01)
    with pytest.raises(RemoteInferenceError) as info:
        remote.run(call("summarization", ws, model="acme/missing", text="a. b."))
    assert info.value.status_code == 404
    assert "acme/missing" in str(info.value)


def test_429_then_success_is_retried(server, ws):
    server.script(429, 503)
    result = endpoint_for(server, "summarization").run(call("summarization", ws, text="First. Second."))
    assert result["text"] == "First."
    assert len(server.requests) == 3


def test_503_forever_gives_up_after_max_retries(server, ws):
    server.script(*[503] * 10)
    with pytest.raises(RemoteInferenceError) as info:
        endpoint_for(server, "summarization", max_retries=2).run(call("summarization", ws, text="x."))
    assert info.value.status_code == 503
    assert "scripted failure 503" in str(info.value)
    assert len(server.requests) == 3


def test_500_is_not_retried(server, ws):
    server.script(500)
    with pytest.raises(RemoteInferenceError) as info:
        endpoint_for(server, "summarization").run(call("summarization", ws, text="x."))
    assert info.value.status_code == 500
    assert len(server.requests) == 1


def test_timeout_is_a_typed_error(server, ws):
    server.slow_seconds = 1.5
    server.script("slow")
    with pytest.raises(RemoteInferenceError, match="within 0.3 s") as info:
        endpoint_for(server, "summarization", timeout=0.3).run(call("summarization", ws, text="x."))
    assert info.value.status_code is None


def test_closed_connection_is_retried_then_typed(server, ws):
    server.script("close")
    assert endpoint_for(server, "summarization").run(call("summarization", ws, text="a. b."))["text"] == "a."
    server.script("close", "close", "close")
    with pytest.raises(RemoteInferenceError, match="closed"):
        endpoint_for(server, "summarization", max_retries=2).run(call("summarization", ws, text="x."))


def test_unreachable_server_is_typed(ws):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there once closed
    with pytest.raises(RemoteInferenceError, match="cannot reach"):
        RemoteExecutor(f"http://127.0.0.1:{port}/x", backoff=0.01).run(call("summarization", ws, text="x."))


def test_garbage_body_is_typed_and_leaves_no_file(server, ws):
    server.script("garbage")
    with pytest.raises(RemoteInferenceError, match="unusable answer"):
        endpoint_for(server, "summarization").run(call("summarization", ws, text="x."))
    server.script("garbage")
    with pytest.raises(RemoteInferenceError):
        endpoint_for(server, "text-to-image").run(call("text-to-image", ws, text="red"))
    server.script("garbage")
    with pytest.raises(RemoteInferenceError, match="not audio"):
        endpoint_for(server, "text-to-speech").run(call("text-to-speech", ws, text="hi"))
    assert outputs_of(ws) == []


def test_a_task_without_remote_handler_is_typed(ws):
    with pytest.raises(RemoteInferenceError, match="no handler"):
        RemoteExecutor(provider="hf-inference").run(
            call("time-series-forecasting", ws, table={"y": ["1", "2"]}))


def test_parallel_calls_share_one_executor(server, ws, tmp_path):
    remote = endpoint_for(server, "text-to-image")
    results: list[dict] = []
    threads = [threading.Thread(target=lambda: results.append(remote.run(call("text-to-image", ws, text="blue"))))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({r["image"] for r in results}) == 4
    assert len(outputs_of(ws)) == 4


async def test_arun_works_in_an_event_loop(server, ws):
    result = await endpoint_for(server, "summarization").arun(call("summarization", ws, text="Yes. No."))
    assert result["text"] == "Yes."


# ------------------------------------------------------------------ offline mode: no Hub, your own server


@pytest.fixture
def hub_offline(monkeypatch):
    """``HF_HUB_OFFLINE=1`` as huggingface_hub reads it (at import, into ``constants``)."""
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


def test_offline_mode_still_asks_the_server_the_user_named(server, ws, tmp_path, hub_offline):
    from huggingface_hub import InferenceClient
    from huggingface_hub.errors import OfflineModeIsEnabled

    with pytest.raises(OfflineModeIsEnabled):  # what huggingface_hub's own session does with any URL
        InferenceClient(timeout=5).feature_extraction("abba", model=f"{server.url}/feature-extraction")
    result = endpoint_for(server, "feature-extraction").run(call("feature-extraction", ws, text="abba"))
    assert result["data"][0] == pytest.approx(math.sqrt(0.5), abs=1e-5)
    image = endpoint_for(server, "text-to-image").run(call("text-to-image", ws, text="a blue square"))
    assert Image.open(image["image"]).format == "PNG"  # the image task's Accept header too
    from tests.inference_server import _image_to_text

    picture = png(tmp_path / "a.png")
    caption = endpoint_for(server, "image-to-text").run(call("image-to-text", ws, image=str(picture)))
    assert caption["text"] == _image_to_text(picture.read_bytes(), {})[0]["generated_text"] == "a 40x30 grey picture"
    assert [r["path"] for r in server.requests] == ["/feature-extraction", "/text-to-image", "/image-to-text"]


def test_offline_mode_errors_of_the_users_server_are_still_read(server, ws, hub_offline):
    with pytest.raises(RemoteInferenceError, match=r"HTTP 404 .*\(is the model id right"):
        endpoint_for(server, "no-such-task", max_retries=0).run(call("summarization", ws, text="x"))


def test_offline_mode_without_a_server_of_ones_own_says_what_to_unset(ws, hub_offline):
    with pytest.raises(RemoteInferenceError) as info:
        RemoteExecutor(max_retries=0).run(call("summarization", ws, model="facebook/bart-large-cnn", text="A text."))
    assert str(info.value) == (
        "summarization: provider 'auto' was not asked for model facebook/bart-large-cnn: HF_HUB_OFFLINE=1 keeps "
        "huggingface_hub off Hugging Face's servers (unset it, or name your own server with --endpoint URL)")
