"""Issue 31 item 6: a real `hugginggpt serve` process stopped (SIGINT) while requests wait on runs whose
tasks block worker threads. It answered every waiting client with a plain-text 500, logged
CancelledError tracebacks, and lived on 15-38 s after "Finished server process". Now: 503 JSON with
Retry-After, each run ended and recorded as cancelled, the process gone within its grace period
(10 s), no traceback in its log."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.inference_server import InferenceServer
from tests.openai_server import OpenAIServer
from tests.server.conftest import png
from tests.server.live import free_port, spawned_server

pytest.importorskip("openai")
pytest.importorskip("langchain_openai")

ROOT = Path(__file__).resolve().parents[2]
GRACE_S = 10.0


@pytest.mark.timeout(900)
def test_a_stopping_server_answers_503_records_its_runs_and_exits_in_time(tmp_path):
    image = "data:image/png;base64," + base64.b64encode(png(tmp_path / "cat.png").read_bytes()).decode()
    content = [{"type": "text", "text": "Describe this image"}, {"type": "image_url", "image_url": {"url": image}}]
    runs_dir, port = tmp_path / "runs", free_port()
    with OpenAIServer() as llm, InferenceServer() as inference:
        inference.slow_seconds = 120  # every task call blocks a worker thread of the server for two minutes
        inference.script(*["slow"] * 8)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "sk-local-stand-in", "HF_ENDPOINT": inference.url,
               "HUGGINGGPT_DOWNLOAD_MODELS": "0", "HUGGINGGPT_CONFIG": str(tmp_path / "none.toml"),
               "HF_HUB_CACHE": str(tmp_path / "hf-cache")}
        for name in ("HUGGINGGPT_API_KEY", "HF_HUB_OFFLINE", "HUGGINGGPT_LLM", "HUGGINGGPT_LOCAL_MODELS"):
            env.pop(name, None)
        (tmp_path / "none.toml").write_text("")
        command = [sys.executable, "-m", "hugginggpt", "serve", "--port", str(port), "--runs-dir", str(runs_dir),
                   "--llm", "openai:gpt-4o-mini", "--base-url", llm.url, "--execution", "remote",
                   "--endpoint", inference.url + "/models/{model}", "--log-level", "info"]
        url, log = f"http://127.0.0.1:{port}", tmp_path / "serve.log"
        with spawned_server("hugginggpt serve", command, url + "/health", lambda r: r.status_code == 200,
                            log_path=log, seconds=400, env=env, cwd=tmp_path) as process:
            answers: dict[str, httpx.Response] = {}

            def ask(name: str, path: str, body: dict) -> None:
                answers[name] = httpx.post(url + path, json=body, timeout=120)

            waiting = [threading.Thread(target=ask, args=("jarvis", "/hugginggpt", {"messages": [
                           {"role": "user", "content": content}]})),
                       threading.Thread(target=ask, args=("openai", "/v1/chat/completions", {"messages": [
                           {"role": "user", "content": content}]}))]
            for thread in waiting:
                thread.start()
            deadline = time.monotonic() + 60
            while sum(r["method"] == "POST" for r in inference.requests) < 2:  # both runs are in their task
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.1)
            process.send_signal(signal.SIGINT)
            told = time.monotonic()
            try:
                process.wait(timeout=GRACE_S + 5)
            except subprocess.TimeoutExpired:
                pytest.fail(f"still running {GRACE_S + 5:g} s after SIGINT: {log.read_text()[-3000:]}")
            gone = time.monotonic() - told
            for thread in waiting:
                thread.join(timeout=30)
    text = log.read_text()
    assert gone < GRACE_S + 1, f"exited {gone:.1f} s after SIGINT"
    assert "Traceback" not in text and "CancelledError" not in text, text[-3000:]
    assert set(answers) == {"jarvis", "openai"}, text[-3000:]
    for name, answer in answers.items():
        assert answer.status_code == 503, (name, answer.status_code, answer.text[:300])
        assert answer.headers["retry-after"].isdigit()
        assert answer.json()["error"]["code"] == "server_stopping"
    records = [json.loads(p.read_text()) for p in runs_dir.glob("*/run.json")]
    assert len(records) == 2, text[-3000:]
    assert {(r["status"], r["error"]) for r in records} == {("cancelled", "cancelled: the server is stopping")}
