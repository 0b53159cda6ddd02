"""The chat page in a real headless Chromium (Debian's, driven by playwright; nothing downloads a
browser): upload an image, ask, watch the plan stream in, see the answer and the media.

One test runs against the in-process server with the request-echo controller (exact plan, so the
audio element is certain); the other against `hugginggpt serve` started as the README says, with
the embedded SmolLM2 GGUF and tiny local task models (structure, not wording).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import png
from tests.server.live import free_port, spawned_server
from tests.shared import gguf_or_skip

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]

# Records every state a plan item takes, in order, as the page changes it.
WATCH_STATES = """() => {
  window.stateLog = [];
  new MutationObserver((changes) => {
    for (const change of changes) {
      const item = change.target;
      if (item.dataset && item.dataset.taskId !== undefined && change.attributeName === "data-state") {
        window.stateLog.push(`${item.dataset.taskId}:${item.dataset.state}`);
      }
    }
  }).observe(document.querySelector("#chat"), {subtree: true, attributes: true, attributeFilter: ["data-state"]});
}"""


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("no system Chromium (Debian: apt-get install -y chromium; .ci/run installs it)")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        yield browser
        browser.close()


def ask(page, text: str, files: list[Path] = (), timeout_s: float = 60) -> object:
    """Send a request from the page and wait until its turn has ended; returns the turn's element."""
    before = page.locator(".turn").count()
    if files:
        page.set_input_files("#files", [str(f) for f in files])
    page.fill("#input", text)
    page.click("#send")
    turn = page.locator(".turn").nth(before)
    turn.locator(".status[data-state='done'], .status[data-state='failed']").wait_for(timeout=timeout_s * 1000)
    page.locator("#send:not([disabled])").wait_for(timeout=10_000)
    return turn


def test_page_uploads_asks_streams_the_plan_and_shows_answer_and_audio(browser, make_server, tmp_path):
    server = make_server()
    page = browser.new_page(accept_downloads=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server.url + "/")
    page.locator("body[data-ready='true']").wait_for()
    page.evaluate(WATCH_STATES)

    turn = ask(page, "Describe the picture, then read it aloud", [png(tmp_path / "cat.png")])

    assert turn.locator(".status").get_attribute("data-state") == "done"
    items = turn.locator(".plan li")
    assert items.count() == 2
    assert "image-to-text" in items.nth(0).inner_text() and "text-to-speech" in items.nth(1).inner_text()
    # each task is labelled with the planner's own words for it
    assert [items.nth(i).locator(".step").inner_text() for i in range(2)] == ["(describe the picture)", "(read it aloud)"]
    assert [items.nth(i).get_attribute("data-state") for i in range(2)] == ["done", "done"]
    log = page.evaluate("window.stateLog")
    for task in ("0", "1"):  # each task was seen pending, then running, then done, live
        states = [entry.split(":")[1] for entry in log if entry.split(":")[0] == task]
        assert states == ["pending", "running", "done"], log
    assert "a photo of a cat" in turn.locator(".answer").inner_text()
    assert turn.locator(".attachments img[data-upload='cat.png']").count() == 1

    audio = turn.locator(".media audio")
    assert audio.count() == 1 and audio.get_attribute("src").startswith("blob:")
    size = audio.evaluate("async (el) => (await (await fetch(el.src)).blob()).size")
    assert size > 44  # a WAV header and samples

    link = turn.locator("a.trace")
    link.wait_for(state="visible")
    with page.expect_download() as download:
        link.click()
    trace = json.loads(Path(download.value.path()).read_text())
    assert [step["task"] for step in trace["plan"]] == ["image-to-text", "text-to-speech"]

    # a second turn carries the first as chat history
    second = ask(page, "Thanks, and now just say hello")
    assert second.locator(".status").get_attribute("data-state") == "done"
    run_id = second.get_attribute("data-run-id")
    run = httpx.get(f"{server.url}/runs/{run_id}").json()
    history = httpx.get(f"{server.url}/runs/{run_id}/files/{run['trace']}").json()["chat_history"]
    assert "Describe the picture, then read it aloud" in json.dumps(history)
    assert "a photo of a cat" in json.dumps(history)
    assert errors == []
    page.close()


@pytest.fixture
def served(tmp_path):
    """`hugginggpt serve` in its own process: SmolLM2 as the controller, tiny local task models."""
    pytest.importorskip("torch")
    from tests.tiny_models import tiny_model_path

    gguf = gguf_or_skip("smollm2-135m")
    port = free_port()
    command = [sys.executable, "-m", "hugginggpt.cli.main", "serve", "--port", str(port), "--llm", f"gguf:{gguf}",
               "--execution", "local", "--runs-dir", str(tmp_path / "runs"), "--max-active", "1", "--timeout", "1100",
               "--local-model", f"image-to-text={tiny_model_path('image-to-text')}",
               "--local-model", f"text-to-speech={tiny_model_path('text-to-speech')}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HUGGINGGPT_DOWNLOAD_MODELS": "0"}
    url = f"http://127.0.0.1:{port}"
    with spawned_server("hugginggpt serve", command, url + "/health", lambda answer: answer.status_code == 200,
                        log_path=tmp_path / "server.log", seconds=300, env=env, cwd=ROOT):
        yield url


@pytest.mark.slow
@pytest.mark.timeout(1200)  # ~1 min on two idle cores; far longer when the cores are shared
def test_page_end_to_end_with_the_embedded_gguf_and_local_models(browser, served, tmp_path):
    page = browser.new_page()
    page.goto(served + "/")
    page.locator("body[data-ready='true']").wait_for()
    page.evaluate(WATCH_STATES)
    image = tmp_path / "example.jpg"
    from PIL import Image

    Image.new("RGB", (32, 32), (200, 40, 40)).save(image, format="JPEG")

    turn = ask(page, "Describe example.jpg, then read the description aloud", [image], timeout_s=900)
    # at start-up the server had the controller read the planning prompt, and says so at --log-level info
    assert "INFO:     the controller read the planning prompt ahead (" in (tmp_path / "server.log").read_text()

    status = turn.locator(".status")
    assert status.get_attribute("data-state") == "done", status.inner_text()
    assert turn.locator(".attachments img[data-upload='example.jpg']").count() == 1
    run = httpx.get(f"{served}/runs/{turn.get_attribute('data-run-id')}").json()
    items = turn.locator(".plan li")
    assert items.count() == len(run["plan"]), "every planned task is shown"
    states = [items.nth(i).get_attribute("data-state") for i in range(items.count())]
    assert all(state in ("done", "failed", "skipped") for state in states), states
    log = page.evaluate("window.stateLog")
    with httpx.stream("GET", f"{served}/runs/{run['id']}/events", timeout=30) as replay:
        events = [json.loads(line[6:]) for line in replay.iter_lines() if line.startswith("data: ")]
    # tasks that started were seen running, live, before they ended (a task whose arguments cannot be
    # built, e.g. reading an output its dependency did not make, fails without starting)
    started = {str(e["id"]) for e in events if e["event"] == "task_start"}
    assert {step for step, outcome in run["results"].items() if outcome["status"] == "ok"} <= started
    assert all(run["results"][step]["status"] in ("ok", "failed") for step in started)
    for step in started:
        task_states = [e.split(":")[1] for e in log if e.split(":")[0] == step]
        assert "running" in task_states and task_states.index("running") < len(task_states) - 1, log
    assert turn.locator(".answer").inner_text().strip(), "an answer is shown"
    produced = [f for f in run["files"] if not f["name"].startswith("uploads/") and f["kind"] != "file"]
    for file in produced:  # every image/audio/video the run produced is shown inline
        element = turn.locator(f".media [data-file='{file['name']}']")
        assert element.count() == 1, (file, turn.locator(".media").inner_html())
        assert element.evaluate("(el) => el.tagName.toLowerCase()") == {"image": "img"}.get(file["kind"], file["kind"])
    page.close()
