"""The server's HTTP APIs against a real uvicorn server: runs, JARVIS's endpoints, OpenAI's API,
bad input, auth, file confinement, cancellation, limits and retention. Bad input and cancellation
are checked for each of the three agents (global, react, tools)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import png
from tests.server.live import RequestEchoLLM

#: The agents `hugginggpt serve --agent ...` serves; every one has the same run lifecycle over HTTP.
AGENTS = ("global", "react", "tools")


def sse_events(response: httpx.Response) -> list[dict]:
    events = []
    for line in response.iter_lines():
        if line.startswith("data: "):
            events.append(json.loads(line[6:]))
    return events


def follow(client: httpx.Client, run_id: str) -> list[dict]:
    with client.stream("GET", f"/runs/{run_id}/events") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return sse_events(response)


def upload_run(client: httpx.Client, text: str, image: Path, **fields) -> str:
    with image.open("rb") as handle:
        response = client.post("/runs", data={"input": text, **fields}, files={"files": (image.name, handle, "image/png")})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def test_multipart_run_streams_plan_tasks_answer_and_serves_its_files(make_server, tmp_path, recorder):
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = upload_run(client, "Describe the picture and read it aloud", png(tmp_path / "in" / "cat.png"))
        events = follow(client, run_id)
        names = [e["event"] for e in events]
        deltas = [i for i, name in enumerate(names) if name == "response_delta"]
        assert len(deltas) > 1 and deltas == list(range(6, 6 + len(deltas)))  # the answer, word by word
        streamed = "".join(events[i]["text"] for i in deltas)
        events = [e for e in events if e["event"] != "response_delta"]
        names = [e["event"] for e in events]
        assert names == ["plan", "selection", "task_start", "task_end", "task_start", "task_end", "response",
                         "final", "end"]
        assert events[-1] == {"event": "end", "status": "done", "error": None}
        assert events[0]["plan"][0]["args"]["image"].endswith("/uploads/cat.png")
        assert "a photo of a cat" in events[6]["output"] and events[6]["output"].startswith(streamed)
        audio = [f for f in events[5]["files"] if f["kind"] == "audio"]
        assert len(audio) == 1 and audio[0]["url"].startswith(f"/runs/{run_id}/files/")

        run = client.get(f"/runs/{run_id}").json()
        assert run["status"] == "done" and "a photo of a cat" in run["output"]
        assert [s["task"] for s in run["plan"]] == ["image-to-text", "text-to-speech"]
        assert run["results"]["0"]["result"] == {"text": "a photo of a cat"}
        assert run["trace"].endswith("trace.json")
        wav = client.get(audio[0]["url"])
        assert wav.status_code == 200 and wav.content[:4] == b"RIFF"
        trace = client.get(f"/runs/{run_id}/files/{run['trace']}", params={"download": 1})
        assert "attachment" in trace.headers["content-disposition"] and json.loads(trace.content)["plan"]
        upload = client.get(f"/runs/{run_id}/files/uploads/cat.png")
        assert upload.status_code == 200 and upload.content[:4] == b"\x89PNG"
        # the tools ran in this run's own workspace, inside the run's folder
        assert Path(recorder.calls[0]["workspace"].root).is_relative_to(server.settings.runs_dir / run_id)

        # a late subscriber gets the same events from the start
        assert [e["event"] for e in follow(client, run_id) if e["event"] != "response_delta"] == names


def test_json_run_with_chat_history(make_server):
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        created = client.post("/runs", json={"input": "Say hello", "chat_history": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]})
        assert created.status_code == 201
        events = follow(client, created.json()["id"])
        assert events[0] == {**events[0], "event": "plan", "plan": []}
        assert events[-1]["status"] == "done"
        trace = client.get(f"/runs/{created.json()['id']}").json()
        assert trace["output"].startswith("Answer:")


def test_a_plan_only_run_plans_and_selects_models_and_runs_no_task(make_server, tmp_path, recorder):
    """``plan_only`` on POST /runs, as JSON and as a form field: what JARVIS's /tasks answers, as a run."""
    server = make_server()
    image = png(tmp_path / "in" / "cat.png")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        from_json = client.post("/runs", json={"input": f"Describe {image} and read it aloud", "plan_only": True})
        assert from_json.status_code == 201, from_json.text
        from_form = upload_run(client, "Describe the picture and read it aloud", image, plan_only="true")
        for run_id in (from_json.json()["id"], from_form):
            names = [e["event"] for e in follow(client, run_id)]
            assert names[:2] == ["plan", "selection"] and "task_start" not in names and names[-1] == "end"
            run = client.get(f"/runs/{run_id}").json()
            assert run["status"] == "done" and run["plan_only"] is True
            assert [s["task"] for s in run["plan"]] == ["image-to-text", "text-to-speech"]
            assert run["selections"]["0"]["model"] == "org/cap" and not run["results"]
        assert recorder.calls == []  # no tool ran
        full = client.post("/runs", json={"input": f"Describe {image} and read it aloud", "plan_only": False})
        follow(client, full.json()["id"])
        assert client.get(f"/runs/{full.json()['id']}").json()["plan_only"] is False and len(recorder.calls) == 2


def test_jarvis_endpoints_answer_in_jarvis_shapes(make_server, tmp_path):
    server = make_server()
    image = png(tmp_path / "dog.png")
    messages = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"},
                {"role": "user", "content": f"Describe {image} and read it aloud"}]
    with httpx.Client(base_url=server.url, timeout=30) as client:
        tasks = client.post("/tasks", json={"messages": messages})
        assert tasks.status_code == 200, tasks.text
        assert [t["task"] for t in tasks.json()] == ["image-to-text", "text-to-speech"]
        assert tasks.json()[1]["args"] == {"text": "<resource>-0"}

        results = client.post("/results", json={"messages": messages}).json()
        assert set(results) == {"0", "1"}
        assert results["0"]["task"]["task"] == "image-to-text"
        assert results["0"]["choose model result"]["model"] == "org/cap"
        assert results["0"]["inference result"] == {"text": "a photo of a dog"}
        assert results["1"]["status"] == "ok" and results["1"]["inference result"]["audio"].endswith(".wav")

        answer = client.post("/hugginggpt", json={"messages": messages[:1]})
        assert answer.status_code == 200 and answer.json() == {"message": "Answer: nothing to do"}


def test_openai_client_gets_answers_streamed_and_not(make_server, tmp_path):
    openai = pytest.importorskip("openai")
    server = make_server()
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    assert {m.id for m in client.models.list()} == {"global", "hugginggpt"}

    import base64
    data_url = "data:image/png;base64," + base64.b64encode(png(tmp_path / "owl.png").read_bytes()).decode()
    content = [{"type": "text", "text": "Describe this image"}, {"type": "image_url", "image_url": {"url": data_url}}]
    completion = client.chat.completions.create(model="hugginggpt", messages=[{"role": "user", "content": content}])
    assert completion.object == "chat.completion"
    assert "a photo of a attachment" in completion.choices[0].message.content
    assert completion.usage.total_tokens == 20  # two LLM calls of 7 + 3 tokens
    assert completion.model_extra["hugginggpt"]["plan"][0]["task"] == "image-to-text"

    stream = client.chat.completions.create(model="global", stream=True,
                                            messages=[{"role": "user", "content": "Say something"}])
    chunks = list(stream)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(pieces) == "Answer: nothing to do"
    assert pieces == ["Answer:", " nothing", " to", " do"]  # as the controller wrote it, word by word
    stages = [c.model_extra["hugginggpt_event"]["event"] for c in chunks if c.model_extra.get("hugginggpt_event")]
    assert stages[:2] == ["plan", "selection"] and stages[-1] == "response"
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_streamed_completion_ends_with_done(make_server):
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        with client.stream("POST", "/v1/chat/completions", json={
                "stream": True, "messages": [{"role": "user", "content": "hi"}]}) as response:
            lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    assert all(json.loads(line[6:])["object"] == "chat.completion.chunk" for line in lines[:-1])


BAD_INPUT = [
    ("/hugginggpt", b"{not json", "malformed JSON"),
    ("/hugginggpt", b"{}", "missing 'messages'"),
    ("/tasks", json.dumps({"messages": []}).encode(), "non-empty list"),
    ("/results", json.dumps({"messages": [{"role": "user", "content": "  "}]}).encode(), "empty"),
    ("/hugginggpt", json.dumps({"messages": [{"role": "wizard", "content": "x"}]}).encode(), "role"),
    ("/hugginggpt", json.dumps({"messages": [{"role": "user", "content": "x" * (1 << 20)}]}).encode(), "limit"),
    ("/v1/chat/completions", json.dumps({"model": "gpt-9", "messages": [{"role": "user", "content": "x"}]}).encode(),
     "unknown agent 'gpt-9'"),
    ("/v1/chat/completions", json.dumps({"messages": [{"role": "user", "content": [{"type": "image_url",
     "image_url": {"url": "data:image/png;base64,AAAA"}}, {"type": "text", "text": "x"}]}]}).encode(), "unsupported type"),
    ("/runs", json.dumps({"input": ""}).encode(), "'input' is empty"),
    ("/runs", json.dumps({"input": "x", "agent": "nope"}).encode(), "unknown agent"),
    ("/runs", json.dumps([1, 2]).encode(), "JSON object"),
    ("/runs", b'{"input": "Say \\ud800 hello"}', "lone surrogate"),  # valid JSON, but not encodable text
    ("/v1/chat/completions", b'{"messages": [{"role": "user", "content": "\\udfff"}]}', "lone surrogate"),
    ("/runs", b'{"input": "\xff\xfe"}', "not UTF-8"),
    # a misspelt field is refused by name, not ignored (a run would go ahead without what was asked)
    ("/runs", json.dumps({"input": "x", "plan-only": True}).encode(), "unknown field 'plan-only': a run takes input,"),
    ("/runs", json.dumps({"input": "x", "history": [], "model": "global"}).encode(), "unknown fields 'history', 'model'"),
    ("/runs", json.dumps({"input": "x", "plan_only": "yes"}).encode(), "'plan_only' must be true or false"),
]


#: Issue 14's bad input aimed at each agent by name: an unknown agent, an empty message, a message
#: over the limit (1 MB, and one character past ``max_message_chars``), a non-string agent.
BAD_AGENT_INPUT = [
    ("/v1/chat/completions", {"model": "hugginggpt-reactt", "messages": [{"role": "user", "content": "x"}]},
     "unknown agent 'reactt'"),
    ("/runs", {"input": "x", "agent": "function-calling"}, "unknown agent 'function-calling'"),
    ("/hugginggpt", {"agent": "Tools", "messages": [{"role": "user", "content": "x"}]}, "unknown agent 'Tools'"),
    ("/tasks", {"agent": ["react"], "messages": [{"role": "user", "content": "x"}]}, "'agent' must be a string"),
    ("/v1/chat/completions", {"model": 7, "messages": [{"role": "user", "content": "x"}]}, "'model' must be a string"),
    ("/runs", {"input": "x", "agent": {"name": "tools"}}, "'agent' must be a string"),
    *[entry for agent in ("react", "tools") for entry in [
        ("/v1/chat/completions", {"model": agent, "messages": [{"role": "user", "content": ""}]}, "is empty"),
        ("/results", {"agent": agent, "messages": [{"role": "user", "content": " \n"}]}, "is empty"),
        ("/runs", {"input": "  ", "agent": agent}, "'input' is empty"),
        ("/v1/chat/completions", {"model": agent, "messages": [{"role": "user", "content": "x" * (1 << 20)}]},
         "limit"),
        ("/hugginggpt", {"agent": agent, "messages": [{"role": "user", "content": "x" * (1 << 20)}]}, "limit"),
        ("/runs", {"input": "x" * (1 << 20), "agent": agent}, "limit"),
        ("/runs", {"input": "x" * 100_001, "agent": agent}, "longer than the limit of 100000 characters"),
        ("/hugginggpt", {"agent": agent, "messages": [{"role": "user", "content": "x" * 100_001}]},
         "longer than the limit of 100000 characters"),
    ]],
]


@pytest.mark.parametrize("default", AGENTS)
def test_bad_input_gets_a_4xx_json_error_and_the_server_keeps_serving(make_server, default):
    server = make_server(agents=(default, *(a for a in AGENTS if a != default)))  # `serve --agent DEFAULT`
    bad = BAD_INPUT + [(path, json.dumps(body).encode(), expected) for path, body, expected in BAD_AGENT_INPUT]
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for path, body, expected in bad:
            response = client.post(path, content=body, headers={"content-type": "application/json"})
            assert 400 <= response.status_code < 500, (path, expected, response.status_code, response.text[:300])
            assert expected in response.json()["error"]["message"], (path, response.json())
        assert client.get("/runs/0123456789abcdef0123456789abcdef").status_code == 404
        assert client.delete("/runs/nope").json()["error"]["code"] == "run_not_found"
        bad_upload = client.post("/runs", data={"input": "x"}, files={"files": ("x.png", b"MZ\x90\x00exe", "image/png")})
        assert bad_upload.status_code == 415 and "unsupported type" in bad_upload.json()["error"]["message"]
        misspelt = client.post("/runs", data={"input": "x", "agnet": "react"},
                               files={"files": ("a.txt", b"hello", "text/plain")})
        assert misspelt.status_code == 400 and "unknown field 'agnet'" in misspelt.json()["error"]["message"]
        no_input = client.post("/runs", files={"files": ("a.txt", b"hello", "text/plain")})
        assert no_input.status_code == 400 and "input" in no_input.json()["error"]["message"]
        urlencoded = client.post("/runs", data={"input": "", "agent": default})  # an HTML form's default encoding
        assert urlencoded.status_code == 415 and "multipart/form-data" in urlencoded.json()["error"]["message"]
        for agent in AGENTS:
            form = {"input": "x" * (1 << 20), "agent": agent}
            too_long = client.post("/runs", data=form, files={"files": ("a.txt", b"hello", "text/plain")})
            assert 400 <= too_long.status_code < 500, (agent, too_long.status_code, too_long.text[:300])
            assert too_long.json()["error"]["message"]
        health = client.get("/health").json()
        assert health["status"] == "ok" and health["default_agent"] == default and health["unfinished_runs"] == 0
        assert list(server.settings.runs_dir.iterdir()) == []  # nothing of a refused request is left
        for agent in AGENTS:  # every agent still answers
            answer = client.post("/hugginggpt", json={"agent": agent, "messages": [{"role": "user", "content": "ok"}]})
            assert answer.status_code == 200 and answer.json()["message"].endswith("nothing to do"), (agent, answer.text)
            completion = client.post("/v1/chat/completions", json={"model": agent, "messages": [
                {"role": "user", "content": "ok"}]})
            assert completion.status_code == 200 and completion.json()["model"] == agent


def test_upload_size_limit(make_server, tmp_path):
    server = make_server(max_upload_bytes=1000)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        big = b"\x89PNG\r\n\x1a\n" + os.urandom(5000)
        response = client.post("/runs", data={"input": "x"}, files={"files": ("big.png", big, "image/png")})
        assert response.status_code == 413 and "limit of 1000 bytes" in response.json()["error"]["message"]
        assert list(server.settings.runs_dir.iterdir()) == []  # nothing of the refused run is left


def test_no_file_outside_the_run_folder_is_served(make_server, tmp_path):
    server = make_server()
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = client.post("/runs", json={"input": "hi"}).json()["id"]
        follow(client, run_id)
        other_id = client.post("/runs", json={"input": "hi"}).json()["id"]
        follow(client, other_id)
        folder = server.settings.runs_dir / run_id
        (folder / "escape").symlink_to(secret)
        (folder / "inside").symlink_to(folder / "uploads" if (folder / "uploads").exists() else folder)
        other_trace = client.get(f"/runs/{other_id}").json()["trace"]
        attempts = ["../../secret.txt", "..%2F..%2Fsecret.txt", "%2E%2E/%2E%2E/secret.txt", str(secret),
                    "%2F" + str(secret).lstrip("/").replace("/", "%2F"), "escape", "inside/" + "x",
                    f"..%2F{other_id}%2F{other_trace}", "uploads/..%2F..%2F..%2Fsecret.txt", "%00", "C:%5Cwin.ini",
                    "x" * 300, "uploads/" + "y" * 300 + ".png"]  # names the file system refuses
        for name in attempts:
            response = client.get(f"/runs/{run_id}/files/{name}")
            assert response.status_code == 404, (name, response.status_code)
            assert "top secret" not in response.text
        raw = httpx.get(f"{server.url}/runs/{run_id}/files/../../../{secret}")  # httpx normalises; send raw too
        assert "top secret" not in raw.text
        assert client.get(f"/runs/{other_id}/files/{other_trace}").status_code == 200


def test_api_key_guards_everything_but_health_and_the_page(make_server, monkeypatch):
    server = make_server(api_key="s3cret")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert client.get("/health").status_code == 200
        assert client.get("/").status_code == 200 and "<html" in client.get("/").text
        assert client.get("/static/app.js").status_code == 200
        for method, path in [("POST", "/runs"), ("GET", "/runs/x"), ("GET", "/runs/x/events"), ("DELETE", "/runs/x"),
                             ("GET", "/runs/x/files/a"), ("POST", "/tasks"), ("POST", "/results"),
                             ("POST", "/hugginggpt"), ("POST", "/v1/chat/completions"), ("GET", "/v1/models")]:
            response = client.request(method, path, json={"input": "x"})
            assert response.status_code == 401, (method, path)
            assert response.headers["www-authenticate"] == "Bearer"
            wrong = client.request(method, path, json={"input": "x"}, headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
        ok = client.post("/runs", json={"input": "hi"}, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 201 and len(ok.json()["id"]) == 32  # 128 random bits, hex


def test_cors_is_off_by_default_and_configurable(make_server):
    plain = make_server()
    with httpx.Client(base_url=plain.url) as client:
        response = client.options("/v1/models", headers={"Origin": "https://evil.example",
                                                         "Access-Control-Request-Method": "GET"})
        assert "access-control-allow-origin" not in response.headers
    allowed = make_server(cors_origins=("https://ui.example",))
    with httpx.Client(base_url=allowed.url) as client:
        response = client.get("/health", headers={"Origin": "https://ui.example"})
        assert response.headers["access-control-allow-origin"] == "https://ui.example"
        response = client.get("/health", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in response.headers


#: How long the sleep task of the cancellation tests runs: the cancel lands while it runs, and
#: the tests then wait past its end to see that nothing of the run goes on.
SLEEP_S = 2.0
#: The tool a cancelled run is in: ``sleep`` awaits, ``nap`` blocks a thread (as real task models do).
SLOW_REQUESTS = {"sleep": f"slow {SLEEP_S:g}, then read the result aloud",
                 "nap": f"slow {SLEEP_S:g} in a thread, then read the result aloud"}


def until(predicate, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    return predicate()


def assert_stopped(server, run_id: str, llm_calls: int, recorder, tool: str = "sleep",
                   seconds: float = SLEEP_S) -> None:
    """Past the end of the task it was cancelled in (``seconds`` long), the run asked the LLM nothing
    more and called no further tool (a sleep never finished; a nap finished in its thread, its result
    unused); its status, its events and its trace say cancelled."""
    time.sleep(seconds + 0.5)
    if tool != "sleep":  # the nap's thread records its call when it ends: late on a loaded machine
        until(lambda: recorder.calls)
    assert len(server.llm.calls) == llm_calls, server.llm.calls[llm_calls:]
    assert [call["task"] for call in recorder.calls] == ([] if tool == "sleep" else ["nap"])
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run = client.get(f"/runs/{run_id}").json()
        events = follow(client, run_id)
    assert (run["status"], run["error"]) == ("cancelled", "cancelled")
    assert [e["event"] for e in events][-2:] == ["task_start", "end"] and events[-2]["task"] == tool
    trace = json.loads(next((server.settings.runs_dir / run_id).glob("*/trace.json")).read_text())
    assert trace["error"].startswith("CancelledError") and trace["plan"][0]["task"] == tool


def assert_keeps_serving(client: httpx.Client, tmp_path: Path, recorder) -> None:
    """The next request to the same agent runs to its end."""
    before = len(recorder.calls)
    image = png(tmp_path / "in" / "dog.png")
    run_id = client.post("/runs", json={"input": f"Describe {image} and read it aloud"}).json()["id"]
    assert follow(client, run_id)[-1] == {"event": "end", "status": "done", "error": None}
    assert "a photo of a dog" in client.get(f"/runs/{run_id}").json()["output"]
    assert [c["task"] for c in recorder.calls[before:]] == ["image-to-text", "text-to-speech"]


@pytest.mark.parametrize("tool", SLOW_REQUESTS)
@pytest.mark.parametrize("agent", AGENTS)
def test_delete_stops_a_run_while_its_tool_runs_and_the_server_keeps_serving(make_server, tmp_path, recorder,
                                                                              agent, tool):
    server = make_server(agents=(agent,))  # as `hugginggpt serve --agent AGENT`
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = client.post("/runs", json={"input": SLOW_REQUESTS[tool]}).json()["id"]
        events = []
        with client.stream("GET", f"/runs/{run_id}/events") as response:
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                events.append(json.loads(line[6:]))
                if events[-1]["event"] == "task_start":
                    assert events[-1]["task"] == tool
                    llm_calls = len(server.llm.calls)
                    started = time.monotonic()
                    assert client.delete(f"/runs/{run_id}").json() == {"id": run_id, "status": "cancelled"}
                    assert time.monotonic() - started < SLEEP_S  # at once, not when the tool ends
        assert events[-1] == {"event": "end", "status": "cancelled", "error": "cancelled"}
        assert_stopped(server, run_id, llm_calls, recorder, tool)
        again = client.delete(f"/runs/{run_id}")
        assert again.status_code == 409 and "already finished" in again.json()["error"]["message"]
        assert_keeps_serving(client, tmp_path, recorder)


@pytest.mark.parametrize("agent", AGENTS)
def test_dropping_a_streamed_completion_stops_its_run(make_server, tmp_path, recorder, agent):
    server = make_server(agents=(agent,))
    with httpx.Client(base_url=server.url, timeout=30) as client:
        body = {"stream": True, "messages": [{"role": "user", "content": SLOW_REQUESTS["sleep"]}]}
        with client.stream("POST", "/v1/chat/completions", json=body) as response:
            for line in response.iter_lines():
                if "task_start" in line:
                    run_id = json.loads(line[6:])["id"].removeprefix("chatcmpl-")
                    llm_calls = len(server.llm.calls)
                    break
        assert until(lambda: client.get(f"/runs/{run_id}").json()["status"] == "cancelled", SLEEP_S)
        assert_stopped(server, run_id, llm_calls, recorder)
        assert_keeps_serving(client, tmp_path, recorder)


@pytest.mark.parametrize("agent", AGENTS)
def test_dropping_a_waiting_request_stops_its_run(make_server, tmp_path, recorder, agent):
    server = make_server(agents=(agent,))
    registry = server.app.state.registry
    seconds = 1.5 * SLEEP_S  # the server notices a client gone from a waiting request within half a second
    request = {"messages": [{"role": "user", "content": f"slow {seconds:g}, then read the result aloud"}]}
    with pytest.raises(httpx.ReadTimeout):  # the client gives up while the run is in its tool
        httpx.post(f"{server.url}/hugginggpt", json=request, timeout=httpx.Timeout(30, read=1.0))
    (run_id,) = registry.runs
    assert until(lambda: registry.runs[run_id].status == "cancelled", seconds)
    assert registry.runs[run_id].events[-2]["event"] == "task_start"
    llm_calls = len(server.llm.calls)
    assert_stopped(server, run_id, llm_calls, recorder, seconds=seconds)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert_keeps_serving(client, tmp_path, recorder)


def test_queue_full_gets_429_with_retry_after_and_timeouts_fail_the_run(make_server):
    server = make_server(max_active=1, max_queued=1, request_timeout=1.5)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        first = client.post("/runs", json={"input": "slow 10"}).json()["id"]
        second = client.post("/runs", json={"input": "hi"}).json()["id"]
        full = client.post("/runs", json={"input": "hi"})
        assert full.status_code == 429 and full.headers["retry-after"] == "5"
        assert "busy" in full.json()["error"]["message"]
        assert follow(client, first)[-1] == {"event": "end", "status": "failed", "error": "timed out after 1.5 s"}
        assert follow(client, second)[-1]["status"] == "done"  # it waited its turn, then ran
        assert client.post("/runs", json={"input": "hi"}).status_code == 201


def test_finished_runs_and_their_files_are_removed_after_the_retention_time(make_server):
    server = make_server(keep_runs_s=1.0)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = client.post("/runs", json={"input": "hi"}).json()["id"]
        follow(client, run_id)
        assert (server.settings.runs_dir / run_id).is_dir()
        deadline = time.monotonic() + 10
        while client.get(f"/runs/{run_id}").status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        gone = client.get(f"/runs/{run_id}")
        assert gone.status_code == 404 and "retention" in gone.json()["error"]["message"]
        assert not (server.settings.runs_dir / run_id).exists()


def test_quiet_streams_send_keep_alive_comments(make_server, monkeypatch):
    from hugginggpt.server import routes_openai, routes_runs

    monkeypatch.setattr(routes_runs, "HEARTBEAT_S", 0.2)
    monkeypatch.setattr(routes_openai, "HEARTBEAT_S", 0.2)
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = client.post("/runs", json={"input": "slow 1"}).json()["id"]
        with client.stream("GET", f"/runs/{run_id}/events") as response:
            lines = list(response.iter_lines())
        assert ": keep-alive" in lines and lines.index(": keep-alive") < lines.index("event: end")
        with client.stream("POST", "/v1/chat/completions",
                           json={"stream": True, "messages": [{"role": "user", "content": "slow 1"}]}) as response:
            lines = list(response.iter_lines())
        data = [line for line in lines if line.startswith("data: ")]
        assert ": keep-alive" in lines and data[-1] == "data: [DONE]"


def test_run_folders_left_by_an_earlier_process_are_removed_at_start(make_server, tmp_path):
    runs_dir = tmp_path / "old-runs"
    old = runs_dir / ("ab" * 16)
    old.mkdir(parents=True)
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    recent, other = runs_dir / ("cd" * 16), runs_dir / "not-a-run"
    recent.mkdir()
    other.mkdir()
    make_server(runs_dir=runs_dir, keep_runs_s=3600)
    assert not old.exists() and recent.is_dir() and other.is_dir()


def test_file_links_in_model_text_survive_names_the_file_system_refuses(tmp_path):
    """A small model can repeat a path until its token limit: a 1,000-character name in a run folder
    is no file, never an OSError that fails the run."""
    from hugginggpt.server.stages import run_files

    (tmp_path / "outputs").mkdir()
    (tmp_path / "outputs" / "a.wav").write_bytes(b"RIFF")
    text = f"audio: {tmp_path}/outputs/a.wav and {tmp_path}/run" + "-ba1206ca" * 120 + "/b.wav"
    assert [f["name"] for f in run_files({"output": text}, tmp_path, "/runs/r")] == ["outputs/a.wav"]


class HalfEmojiLLM(RequestEchoLLM):
    """Answers with half of a surrogate pair, as a model's JSON escape "\\ud83d" parses to."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        result = super()._generate(messages, stop, run_manager, **kwargs)
        message = result.generations[0].message
        if message.content.startswith("Answer:"):
            result.generations[0].message = message.model_copy(update={"content": message.content + " \ud83d!"})
        return result


def test_a_lone_surrogate_in_model_text_reaches_every_client_as_a_replacement_character(make_server):
    server = make_server(HalfEmojiLLM())
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = client.post("/runs", json={"input": "Say hello"}).json()["id"]
        events = follow(client, run_id)
        assert events[-1]["status"] == "done"
        assert next(e for e in events if e.get("event") == "response")["output"].endswith("\ufffd!")
        assert client.get(f"/runs/{run_id}").json()["output"].endswith("\ufffd!")
        records = list(server.app.state.settings.runs_dir.rglob("run.json"))  # what is left after the process
        assert len(records) == 1 and json.loads(records[0].read_text("utf-8"))["output"].endswith("\ufffd!")
        completion = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
        assert completion.status_code == 200
        assert completion.json()["choices"][0]["message"]["content"].endswith("\ufffd!")
        with client.stream("POST", "/v1/chat/completions", json={
                "stream": True, "messages": [{"role": "user", "content": "hi"}]}) as response:
            lines = [line for line in response.iter_lines() if line.startswith("data: ")]
        assert lines[-1] == "data: [DONE]"
        streamed = "".join(json.loads(line[6:])["choices"][0]["delta"].get("content") or "" for line in lines[:-1])
        assert streamed.endswith("\ufffd!")


class PrefillingLLM(RequestEchoLLM):
    """A controller that keeps what it reads (as the embedded llama.cpp model does): ``prefill`` is
    recorded; ``hold`` keeps the reading going until the test lets it end."""

    read: list = []
    hold: Any = None

    def prefill(self, messages):
        if self.hold is not None:
            assert self.hold.wait(10)
        self.read.append([m.content for m in messages])
        return 2300


def test_the_server_has_its_controller_read_the_planning_prompt_ahead_without_waiting_for_it(make_server):
    hold = threading.Event()
    llm = PrefillingLLM(read=[], hold=hold)
    server = make_server(llm)  # started: it did not wait for the reading
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert client.get("/health").status_code == 200
        assert llm.read == []
        hold.set()
        deadline = time.monotonic() + 10
        while not llm.read and time.monotonic() < deadline:
            time.sleep(0.05)
        (read,) = llm.read
        assert "<resource>-" in read[0] and read[-1] == ""  # the planning prompt's static part, no request
        events = follow(client, client.post("/runs", json={"input": "Say hello"}).json()["id"])
        assert events[-1]["status"] == "done" and len(llm.read) == 1
