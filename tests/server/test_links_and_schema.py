"""Issue 34 items 3 and 4: server answers name a run's files by the URL the server serves them at, never
by a path on the server's disk; the OpenAPI schema declares every request body (a valid OpenAPI
document, checked with openapi-spec-validator)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import httpx
import pytest

from hugginggpt.server.stages import Links
from tests.server.conftest import png


def test_every_answer_names_run_files_by_url(make_server, tmp_path):
    """Item 3: through `serve`, the answer said "I saved ... at /.../runs/server/.../outputs/x.wav"."""
    server = make_server()
    image = png(tmp_path / "cat.png")
    messages = [{"role": "user", "content": f"Describe {image} and read it aloud"}]
    runs_dir = str(server.settings.runs_dir)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        jarvis = client.post("/hugginggpt", json={"messages": messages})
        results = client.post("/results", json={"messages": messages})
        completion = client.post("/v1/chat/completions", json={"messages": messages})
        with client.stream("POST", "/v1/chat/completions", json={"messages": messages, "stream": True}) as stream:
            chunks = [json.loads(line[6:]) for line in stream.iter_lines()
                      if line.startswith("data: ") and line != "data: [DONE]"]
        run_id = completion.json()["hugginggpt"]["run_id"]
        run = client.get(f"/runs/{run_id}").json()
        with client.stream("GET", f"/runs/{run_id}/events") as events:
            event_text = "".join(events.iter_lines())
        for answer in (jarvis, results, completion):
            assert answer.status_code == 200, answer.text[:300]
            assert runs_dir not in answer.text, answer.text[:500]
        for text in (json.dumps(run), event_text, json.dumps(chunks)):
            assert runs_dir not in text
        files = f"{server.url}/runs/{run_id}/files/"
        content = completion.json()["choices"][0]["message"]["content"]
        assert files in content and ".wav" in content
        streamed = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices"))
        assert f"{server.url}/runs/" in streamed and "/files/" in streamed and ".wav" in streamed
        url = next(word for word in content.split() if word.startswith(files)).rstrip(".,;")
        assert client.get(url).content[:4] == b"RIFF"  # the URL serves the file
        assert run["output"] == content
        assert run["results"]["1"]["result"]["audio"].startswith(files)
        assert run["files"] and all(f["url"].startswith(f"/runs/{run_id}/files/") for f in run["files"])
        assert f"{server.url}/runs/" in jarvis.json()["message"]


def test_streamed_pieces_add_up_to_the_whole_answer_with_links(tmp_path):
    folder = tmp_path / "runs" / "0123abcd"
    links = Links(folder, "http://127.0.0.1:8000/runs/0123abcd")
    text = (f"I saved the image at {folder}/outputs/a b.png. The audio: {folder}/outputs/x.wav, "
            f"and '{folder}/uploads/cat.png'; not {folder}/../secret.txt nor /etc/passwd. End {folder}/outputs/z.gif")
    whole = links.text(text)
    assert str(folder) + "/outputs" not in whole
    assert "http://127.0.0.1:8000/runs/0123abcd/files/outputs/x.wav," in whole
    assert "http://127.0.0.1:8000/runs/0123abcd/files/uploads/cat.png'" in whole
    assert f"{folder}/../secret.txt" in whole and "/etc/passwd" in whole  # nothing outside the folder is linked
    rng = random.Random(7)
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 40)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        out = "".join(links.feed(piece) for piece in pieces) + links.flush()
        assert out == whole


def test_the_openapi_schema_declares_the_request_bodies_and_is_valid(make_server):
    """Item 4: /openapi.json listed the paths but no request bodies (they are read by hand, within
    their byte limits), so /docs and generated clients could not show what to send."""
    validator = pytest.importorskip("openapi_spec_validator")
    jsonschema = pytest.importorskip("jsonschema")
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        spec = client.get("/openapi.json").json()
    validator.validate(spec)
    bodies = {path: operation["post"]["requestBody"]["content"] for path, operation in spec["paths"].items()
              if "post" in operation}
    assert set(bodies) == {"/runs", "/tasks", "/results", "/hugginggpt", "/v1/chat/completions"}
    assert set(bodies["/runs"]) == {"application/json", "multipart/form-data"}
    components = spec["components"]["schemas"]

    def check(path: str, body: dict, kind: str = "application/json") -> None:
        ref = bodies[path][kind]["schema"]["$ref"]
        schema = {**components[ref.rsplit("/", 1)[1]], "components": spec["components"]}
        jsonschema.validate(body, json.loads(json.dumps(schema)))

    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    check("/runs", {"input": "Describe it", "plan_only": True, "chat_history": [{"role": "user", "content": "hi"}]})
    check("/v1/chat/completions", {"model": "hugginggpt", "stream": True, "temperature": 0.2,
                                   "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}, image]}]})
    check("/hugginggpt", {"messages": [{"role": "user", "content": "hello"}]})
    for path, body in (("/runs", {"input": "x", "plan-only": True}), ("/runs", {}),
                       ("/tasks", {"messages": []}), ("/v1/chat/completions", {"messages": [{"role": "wizard"}]})):
        with pytest.raises(jsonschema.ValidationError):
            check(path, body)
    assert components["RunForm"]["properties"]["files"]["items"]["format"] == "binary"
