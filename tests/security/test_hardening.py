"""Issue 13: hostile inputs bounded in time and memory, answered in one line.

Each test reproduces one finding (the issue's item number is in the test's docstring) and failed on the
code before the fix. Wall-clock bounds are used only where a deadline is the behaviour under test, with
margins far from both the limit and what the old code took.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from PIL import Image

from hugginggpt.errors import AgentInputError, InvalidArgumentsError, RemoteInferenceError, ResourceError
from hugginggpt.tools import build_tools, get_task
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.resources import Workspace, public_only
from hugginggpt.tools.results import envelope
from tests.http_servers import RouteHandler, serve

# --------------------------------------------------------------------------- 1. audio resampling


def _wav(path: Path, samples: int, rate: int) -> Path:
    import soundfile

    soundfile.write(str(path), np.zeros(samples, dtype=np.float32), rate, format="WAV", subtype="PCM_16")
    return path


def test_a_1_hz_wav_is_refused_before_it_is_resampled(tmp_path):
    """Item 1: 100 samples at 1 Hz asked for 1.6 M samples at 16 kHz (20 KB asked for 320 M)."""
    from hugginggpt.tools.resources import load_audio

    path = _wav(tmp_path / "slow.wav", 100, 1)
    with pytest.raises(ResourceError, match="sample rate of 1 Hz"):
        load_audio(path, 16_000)


def test_audio_longer_than_the_limit_is_refused_before_decoding(tmp_path, monkeypatch):
    """Item 1: decoded audio is bounded by duration (``HUGGINGGPT_MAX_AUDIO_SECONDS``, default 1 hour)."""
    from hugginggpt.tools.resources import load_audio
    from hugginggpt.tools.resources.media import MAX_AUDIO_SECONDS_ENV, max_audio_seconds

    assert max_audio_seconds() == 3600
    path = _wav(tmp_path / "long.wav", 3 * 8000, 8000)
    monkeypatch.setenv(MAX_AUDIO_SECONDS_ENV, "2")
    with pytest.raises(ResourceError, match=r"3 s long; at most 2 s .*HUGGINGGPT_MAX_AUDIO_SECONDS"):
        load_audio(path, 16_000)
    monkeypatch.setenv(MAX_AUDIO_SECONDS_ENV, "5")
    samples, rate = load_audio(path, 16_000)
    assert rate == 16_000 and samples.shape == (48_000,)


# ------------------------------------------------------------------------------------ 2. num_frames


def test_num_frames_has_a_maximum_the_schema_and_the_llm_see():
    """Item 2: ``num_frames: 100000`` is refused at the tool's door, and the schema says why."""
    spec = get_task("video-text-to-text")
    tool = build_tools(["video-text-to-text"])[0]
    schema = tool.args_schema.model_json_schema()["properties"]["num_frames"]
    assert schema["maximum"] == spec.arg("num_frames").maximum == 64
    assert "at most 64" in tool.description
    with pytest.raises(InvalidArgumentsError, match="num_frames"):
        tool.invoke({"video": "clip.gif", "text": "what happens?", "num_frames": 100_000})


def test_the_frame_decoder_refuses_absurd_frame_counts(tmp_path):
    """Item 2: the decoder itself is bounded too (a caller that skips the schema)."""
    from hugginggpt.tools.executors.local_tasks.video_frames import MAX_FRAMES, read_frames

    path = tmp_path / "clip.gif"
    frames = [Image.new("RGB", (8, 8), (i * 40, 0, 0)) for i in range(3)]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=100)
    assert len(read_frames(path, 4)) == 4
    with pytest.raises(ResourceError, match=f"at most {MAX_FRAMES}"):
        read_frames(path, 100_000)


# --------------------------------------------------------------------------- 5. download deadline


class SlowHandler(RouteHandler):
    hits: ClassVar[list[str]] = []

    def record(self) -> None:
        self.hits.append(self.path)


def _drip_headers(h: SlowHandler) -> None:
    """A valid answer whose headers come one byte every 0.2 s (6 s in all): each read is fast."""
    h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 0\r\nX-Slow: ")
    for _ in range(30):
        h.wfile.write(b"a")
        h.wfile.flush()
        time.sleep(0.2)
    h.wfile.write(b"\r\n\r\n")


def _slow_hop(h: SlowHandler) -> None:
    """Each hop answers after 0.7 s with a redirect to the next one (six hops: 4.2 s in all)."""
    hop = int(h.path.rsplit("=", 1)[1])
    time.sleep(0.7)
    h.send_response(302)
    h.send_header("Location", f"/hop?n={hop + 1}")
    h.send_header("Content-Length", "0")
    h.end_headers()


SlowHandler.routes = {"/drip": _drip_headers, "/hop": _slow_hop}


@pytest.fixture(scope="module")
def slow_url() -> Iterator[str]:
    yield from serve(SlowHandler)


def _trusting(url: str):
    port = int(url.rsplit(":", 1)[1])
    return lambda address, at: None if at == port and address.is_loopback else public_only(address, at)


@pytest.mark.parametrize("private", [False, True], ids=["guarded", "private-urls-allowed"])
@pytest.mark.parametrize("route", ["/drip", "/hop?n=0"], ids=["dripping-headers", "slow-redirect-hops"])
def test_one_deadline_covers_headers_and_redirects(tmp_path, slow_url, route, private, monkeypatch):
    """Item 5: ``download_timeout=1`` held a download 12-30 s (dripping headers) or 10.8 s (slow hops)."""
    from hugginggpt.tools.resources import allow_any, download

    for var in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    policy = allow_any if private else _trusting(slow_url)
    started = time.monotonic()
    with pytest.raises(ResourceError, match="timed out after 1 s"):
        download(slow_url + route, tmp_path, max_bytes=1 << 20, timeout=1.0, address_policy=policy)
    assert time.monotonic() - started < 3.5  # the server holds it 4.2-6 s without the deadline
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------- 6. pixel limit


def _bomb(path: Path, side: int = 12_000) -> Path:
    Image.new("1", (side, side)).save(path, format="PNG")  # 144 MP, ~140 KB: Pillow only warns
    return path


def test_a_144_megapixel_png_is_refused(tmp_path):
    """Item 6: between 89 and 179 MP Pillow only warns; a 137 KB PNG cost 907 MiB to open."""
    from hugginggpt.tools.resources import load_image

    ws = Workspace(tmp_path / "run")
    bomb = _bomb(ws.root / "bomb.png")
    with pytest.raises(ResourceError, match=r"144,000,000 pixels.*HUGGINGGPT_MAX_IMAGE_PIXELS"):
        ws.resolve("bomb.png", "image")
    with pytest.raises(ResourceError, match="144,000,000 pixels"):
        load_image(bomb)


def test_the_pixel_limit_is_a_setting(tmp_path, monkeypatch):
    from hugginggpt.tools.resources import load_image
    from hugginggpt.tools.resources.media import MAX_IMAGE_PIXELS_ENV

    path = tmp_path / "small.png"
    Image.new("RGB", (100, 100)).save(path)
    assert load_image(path).size == (100, 100)
    monkeypatch.setenv(MAX_IMAGE_PIXELS_ENV, "5000")
    with pytest.raises(ResourceError, match="10,000 pixels"):
        load_image(path)


# -------------------------------------------------------------------------- 7. existence oracle


def test_no_file_existence_oracle_next_to_an_allowed_file(tmp_path):
    """Item 7: a relative name next to the user's photo said "escapes" if the file existed, "file not
    found" if not; an LLM could probe ``.ssh/id_rsa``. Both now get the same answer."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("secret")
    Image.new("RGB", (4, 4)).save(home / "photo.png")
    ws = Workspace(tmp_path / "run", inputs=[home / "photo.png"])
    assert ws.resolve("photo.png", "image") == home / "photo.png"
    answers = []
    for name in (".ssh/id_rsa", ".ssh/no_such_key"):
        with pytest.raises(ResourceError) as caught:
            ws.resolve(name)
        answers.append(str(caught.value).replace(name, "NAME"))
    assert answers[0] == answers[1]


# ---------------------------------------------------------------------------- 9. address deny list

SPECIAL_PURPOSE = ["fec0::1", "192.0.0.8", "192.0.0.9", "192.0.0.170", "192.31.196.1", "192.52.193.1", "192.88.99.1",
                   "192.175.48.1", "100::1", "2001::1", "2001:db8::1", "3fff::1", "5f00::1", "64:ff9b:1::1",
                   "100.64.0.1", "198.18.0.1", "240.0.0.1", "255.255.255.255", "::", "::1", "::2", "fe80::1",
                   "fc00::1", "ff02::1", "0.1.2.3", "127.0.0.2", "169.254.169.254", "192.0.2.1", "203.0.113.9"]


@pytest.mark.parametrize("address", SPECIAL_PURPOSE)
def test_special_purpose_addresses_are_refused_offline(address):
    """Item 9: ``is_global`` alone let ``fec0::/10`` and ``192.0.0.8`` through; an explicit deny list of
    the IANA special-purpose ranges sits on top of it (checked without any connection)."""
    assert public_only(ipaddress.ip_address(address), 80) is not None


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001::1"])
def test_public_addresses_stay_allowed(address):
    assert public_only(ipaddress.ip_address(address), 443) is None


# ------------------------------------------------------------------------------ 10. answer check


@pytest.mark.parametrize("path", ["/etc/passwd", "~/.ssh/id_rsa", "/proc/self/environ", "/home/u/.aws/credentials",
                                  "C:\\Users\\u\\secret.txt"])
def test_the_answer_check_flags_every_path_no_task_produced(path):
    """Item 10: only media suffixes were flagged; containment must see every absolute or home path."""
    from hugginggpt.agent.answer_check import unknown_paths

    files = {"/runs/r1/outputs/a.png", "/data/in"}
    answer = f"Done: I read {path}. The image is /runs/r1/outputs/a.png and your folder /data/in/cat.jpg."
    assert unknown_paths(answer, files) == [path]


def test_the_answer_check_leaves_ordinary_text_alone():
    from hugginggpt.agent.answer_check import unknown_paths

    text = "It is 3/4 full, about ~5 km/s, and/or see https://example.com/x/y.png (e.g. 1.5x)."
    assert unknown_paths(text, set()) == []


# ------------------------------------------------------------------------------ 11. size limits


def test_a_huge_request_is_refused_at_the_entrance():
    """Item 11: the request is bounded where it enters (``agent/request.py``)."""
    from hugginggpt.agent.request import AgentRequest
    from hugginggpt.tools.schemas import MAX_TEXT_CHARS

    assert AgentRequest.parse("x" * MAX_TEXT_CHARS).input
    with pytest.raises(AgentInputError, match=f"at most {MAX_TEXT_CHARS:,}"):
        AgentRequest.parse({"input": "x" * (MAX_TEXT_CHARS + 1)})


def test_a_huge_tool_argument_is_refused_by_validation():
    """Item 11: a 50 MB argument ran, wrote a 300 MB trace and went whole into the response prompt."""
    from hugginggpt.tools.schemas import MAX_TEXT_CHARS

    tool = build_tools(["summarization"])[0]
    with pytest.raises(InvalidArgumentsError, match=f"text: .*at most {MAX_TEXT_CHARS}"):
        tool.invoke({"text": "x" * (MAX_TEXT_CHARS + 1)})
    table = build_tools(["tabular-classification"])[0]
    with pytest.raises(InvalidArgumentsError, match=f"table: .*at most {MAX_TEXT_CHARS:,}"):
        table.invoke({"table": {"a": ["x" * 1000] * (MAX_TEXT_CHARS // 1000 + 1)}})


def test_long_arguments_are_cut_in_the_response_prompt_with_a_marker():
    from hugginggpt.agent.plan import Plan
    from hugginggpt.agent.response import PROMPT_ARG_CHARS, predictions_text

    plan = Plan.model_validate({"tasks": [{"task": "summarization", "id": 0, "args": {"text": "y" * 1_000_000}}]})
    text = predictions_text(plan, {}, {0: {"status": "ok", "result": {"text": "short"}}})
    assert len(text) < PROMPT_ARG_CHARS + 500
    assert f"[{1_000_000 - PROMPT_ARG_CHARS:,} more characters cut]" in text


def test_long_strings_are_cut_in_the_trace_with_a_marker(tmp_path):
    from hugginggpt.agent.trace import TRACE_TEXT_CHARS, Trace

    trace = Trace(tmp_path / "trace.json", input="short")
    trace.event("task_start", args={"text": "z" * 5_000_000})
    text = trace.write().read_text()
    assert len(text) < TRACE_TEXT_CHARS + 5_000
    assert f"[{5_000_000 - TRACE_TEXT_CHARS:,} more characters cut]" in text
    json.loads(text)


# ----------------------------------------------------------------------- 12. tabular-regression


def test_remote_tabular_regression_says_before_the_call_that_no_provider_serves_it(tmp_path):
    """Item 12: it always failed with an opaque "not supported for provider 'hf-inference'"."""
    from hugginggpt.tools.executors.remote import RemoteExecutor
    from tests.inference_server import InferenceServer

    with InferenceServer() as server:
        remote = RemoteExecutor(f"{server.url}/models/m", max_retries=0)
        assert not remote.can_run("tabular-regression", "some/model")
        assert remote.can_run("tabular-classification", "some/model")
        call = TaskCall(task=get_task("tabular-regression"), args={"table": {"a": ["1"]}}, workspace=Workspace(tmp_path))
        with pytest.raises(RemoteInferenceError, match="no Inference Provider serves tabular-regression"):
            remote.run(call)
        assert server.requests == []


# ---------------------------------------------------------- issue 12 item 5: table confinement


def test_a_remote_table_outside_the_workspace_is_not_read_nor_sent(tmp_path):
    """The remote executor read any CSV path and sent it to the endpoint; now tables pass the workspace."""
    from hugginggpt.tools.executors.remote import RemoteExecutor
    from tests.inference_server import InferenceServer

    secret = tmp_path / "outside" / "salaries.csv"
    secret.parent.mkdir()
    secret.write_text("name,salary\nalice,123456\n")
    inside = tmp_path / "run" / "rows.csv"
    inside.parent.mkdir()
    inside.write_text("a,b\n1,2\n")
    ws = Workspace(tmp_path / "run")
    with InferenceServer() as server:
        remote = RemoteExecutor(f"{server.url}/models/m", max_retries=0)
        call = TaskCall(task=get_task("tabular-classification"), args={"table": str(secret)}, workspace=ws)
        with pytest.raises(ResourceError, match="table: path escapes the allowed folders"):
            remote.run(call)
        assert server.requests == []
        call = TaskCall(task=get_task("tabular-classification"), args={"table": "rows.csv"}, workspace=ws)
        with pytest.raises(RemoteInferenceError):  # the stand-in has no tabular model: it got the request
            remote.run(call)
        assert len(server.requests) == 1 and b"123456" not in server.requests[0]["body"]


class _Echo(Executor):
    name = "echo"

    def can_run(self, task, model):
        return True

    def run(self, call):
        return envelope(text="ran", task=call.task.name)


def test_the_local_table_readers_share_the_one_reader(tmp_path):
    """nlp and forecasting read tables through ``resources.tables.read_table``: same confinement."""
    from hugginggpt.tools.executors.local_tasks import forecasting, nlp
    from hugginggpt.tools.resources.tables import read_table

    assert nlp.read_table is read_table and forecasting.read_table is read_table
    ws = Workspace(tmp_path / "run")
    (tmp_path / "secret.csv").write_text("a\n1\n")
    with pytest.raises(ResourceError, match="escapes"):
        read_table(str(tmp_path / "secret.csv"), ws, "table-question-answering")
    (ws.root / "t.csv").write_text("a,b\n1,\n")
    assert read_table("t.csv", ws) == {"a": ["1"], "b": [""]}
    assert read_table({"a": 1, "b": [2, 3]}, ws) == {"a": [1], "b": [2, 3]}


def test_the_unserved_tasks_are_really_served_by_no_provider():
    """``UNSERVED`` follows huggingface_hub: when a provider learns the task, this fails and the entry goes."""
    from huggingface_hub.inference._providers import PROVIDERS

    from hugginggpt.tools.executors.remote import UNSERVED

    for task in UNSERVED:
        assert not any(task in tasks for tasks in PROVIDERS.values())
