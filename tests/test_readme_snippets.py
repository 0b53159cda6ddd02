"""Every ```python block of README.md runs as written (issue 26, part 1), and does what it says.

The blocks are read from the README itself, so a new one is run as soon as it is written. The blocks
of one ``##`` section run in order in one namespace, as a reader types them into one session (the
second tools block uses the first one's ``tools``). Around them, only the environment a user would
have: the current directory holds ``examples/example.jpg`` (the repository's own), the controller is
``openai:gpt-4o-mini`` behind ``OPENAI_BASE_URL`` (a local OpenAI-compatible stand-in,
``tests/openai_server.py``), task models run on a local Inference API stand-in
(``HUGGINGGPT_ENDPOINT``, ``tests/inference_server.py``) and the server a block talks to is
``hugginggpt serve``'s application on its default address. Nothing reaches the network.

Each block has a check in ``CHECKS`` of what it printed, returned or left in its namespace; a block
without one fails and says so. A block that truly needs the internet may be marked in the README
with ``<!-- not run: WHY -->`` on the line before its fence: it is skipped with that reason.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import shutil
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.inference_server import InferenceServer
from tests.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
EXAMPLE = ROOT / "examples" / "example.jpg"
NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<why>.+?)\s*-->")


# ---------------------------------------------------------------------------------- the README's blocks


@dataclass(frozen=True)
class Block:
    section: str  # the "## " heading it is under
    index: int  # its place among the section's python blocks, from 1
    line: int  # the line of its opening fence
    code: str
    not_run: str | None = None  # why, when the README marks it

    @property
    def id(self) -> str:
        return f"{re.sub(r'[^a-z0-9]+', '-', self.section.lower()).strip('-')}-{self.index}"


def readme_blocks(text: str) -> list[Block]:
    """The ```python blocks of ``text`` (indented ones, as in a list item, dedented)."""
    blocks: list[Block] = []
    lines = text.splitlines()
    section, counts, i = "", {}, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        fence = line.lstrip()
        if fence.startswith("```"):
            indent = len(line) - len(fence)
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            if fence[3:].strip() == "python":
                before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
                marked = NOT_RUN.search(before)
                counts[section] = counts.get(section, 0) + 1
                code = "\n".join(row[indent:] for row in lines[i + 1:end]) + "\n"
                blocks.append(Block(section, counts[section], i + 1, code, marked and marked.group("why")))
            i = end
        i += 1
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_the_readme_blocks_are_found():
    assert len(BLOCKS) >= 7 and len({block.id for block in BLOCKS}) == len(BLOCKS)
    assert all(block.code.strip() for block in BLOCKS)


def test_a_block_marked_not_run_is_found_with_its_reason():
    text = "## A\n\n<!-- not run: needs a GPU -->\n```python\nprint(1)\n```\n\n  ```python\n  print(2)\n  ```\n"
    first, second = readme_blocks(text)
    assert (first.id, first.not_run, first.code) == ("a-1", "needs a GPU", "print(1)\n")
    assert (second.id, second.not_run, second.code) == ("a-2", None, "print(2)\n")


# ---------------------------------------------------------------------------------- running them


@dataclass
class Ran:
    """What a block did: its printed lines, the value of each top-level expression, its namespace."""

    printed: list[str]
    values: list[Any]
    namespace: dict[str, Any]


@dataclass
class Session:
    """The blocks of one section run in order in one namespace."""

    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__readme__"})
    ran: dict[str, Ran] = field(default_factory=dict)

    def run(self, block: Block) -> Ran:
        if block.id not in self.ran:
            tree = ast.parse(block.code, filename=f"README.md:{block.line}")
            out, values = io.StringIO(), []
            with contextlib.redirect_stdout(out):
                for statement in tree.body:  # an expression's value is kept, as a REPL shows it
                    if isinstance(statement, ast.Expr):
                        code = compile(ast.Expression(statement.value), f"README.md:{block.line}", "eval")
                        values.append(eval(code, self.namespace))
                    else:
                        module = ast.Module(body=[statement], type_ignores=[])
                        exec(compile(module, f"README.md:{block.line}", "exec"), self.namespace)
            self.ran[block.id] = Ran(out.getvalue().splitlines(), values, self.namespace)
        return self.ran[block.id]


def hub_listing() -> dict[str, dict[str, Any]]:
    """Every model of the shipped catalog under its task, for the Inference API stand-in; a ControlNet
    answers as the Inference API's image-to-image does (what the remote executor calls it with)."""
    tasks = json.loads((ROOT / "hugginggpt" / "tools" / "catalog" / "models.json").read_text())["tasks"]
    return {card["id"]: {"pipeline_tag": "image-to-image" if task.endswith("-text-to-image") and task != "text-to-image"
                         else task, "downloads": card.get("downloads", 0)}
            for task, cards in tasks.items() for card in cards}


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Iterator[dict[str, Any]]:
    """The user's folder and environment: ``examples/example.jpg`` in the current directory, the
    controller and the task models on local stand-ins, an empty Hugging Face cache (every task model
    runs remotely), no config file of the user's."""
    import huggingface_hub.constants as hub_constants

    base = tmp_path_factory.mktemp("readme")
    project = base / "project"
    (project / "examples").mkdir(parents=True)
    shutil.copy(EXAMPLE, project / "examples" / EXAMPLE.name)
    (base / "config.toml").write_text("")
    with OpenAIServer() as llm, InferenceServer(hub_listing()) as inference, pytest.MonkeyPatch.context() as mp:
        for name in ("HUGGINGGPT_LLM", "HUGGINGGPT_BASE_URL", "HUGGINGGPT_AGENT", "HUGGINGGPT_EXECUTION",
                     "HUGGINGGPT_LOCAL_MODELS", "HUGGINGGPT_TRACE_DIR", "HUGGINGGPT_API_KEY", "HF_HUB_OFFLINE",
                     "OPENAI_API_BASE", "HF_TOKEN"):
            mp.delenv(name, raising=False)
        mp.setenv("HUGGINGGPT_CONFIG", str(base / "config.toml"))
        mp.setenv("OPENAI_API_KEY", "sk-local-stand-in")
        mp.setenv("OPENAI_BASE_URL", llm.url)
        mp.setenv("HUGGINGGPT_ENDPOINT", inference.url + "/models/{model}")
        mp.setenv("HUGGINGGPT_DOWNLOAD_MODELS", "0")
        mp.setenv("HF_ENDPOINT", inference.url)  # anything that would ask the Hub asks the stand-in
        mp.setattr(hub_constants, "ENDPOINT", inference.url)
        mp.setattr(hub_constants, "HF_HUB_CACHE", str(base / "empty-hf-cache"))
        mp.chdir(project)
        yield {"project": project, "llm": llm, "inference": inference, "sessions": {}}


@pytest.fixture(scope="module")
def serve(place) -> Iterator[Callable[[], Any]]:
    """``hugginggpt serve`` with its defaults (127.0.0.1:8000) on the stand-ins, started on first use."""
    started: list[Any] = []

    def start() -> Any:
        if not started:
            pytest.importorskip("fastapi")
            from hugginggpt.config import load_settings
            from hugginggpt.server import ServerSettings, create_app
            from hugginggpt.server.agents import pool_from_settings
            from tests.server.live import LiveServer

            server = ServerSettings(runs_dir=place["project"].parent / "server-runs")
            with socket.socket() as probe:
                if probe.connect_ex((server.host, server.port)) == 0:
                    pytest.skip(f"{server.host}:{server.port}, the server's default address, is in use here")
            started.append(LiveServer(create_app(server, pool_from_settings(load_settings())), port=server.port).__enter__())
        return started[0]

    yield start
    for live in started:
        live.__exit__(None, None, None)


@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_readme_block_runs_as_written(block, place, serve):
    if block.not_run:
        pytest.skip(f"README.md line {block.line}: not run: {block.not_run}")
    check = CHECKS.get(block.id)
    if check is None:
        pytest.fail(f"README.md line {block.line} ({block.id}) has no check: add one to CHECKS in {Path(__file__).name} "
                    "that asserts what the block prints or returns")
    needs = getattr(check, "needs", ())
    if "server" in needs:
        serve()
    session = place["sessions"].setdefault(block.section, Session())
    for earlier in BLOCKS:  # the section's blocks before it, as a reader ran them
        if earlier.section == block.section and earlier.index < block.index:
            session.run(earlier)
    check(session.run(block), place)


# ---------------------------------------------------------------------------------- what each block does

CHECKS: dict[str, Callable[[Ran, dict[str, Any]], None]] = {}


def check(block_id: str, *, needs: tuple[str, ...] = ()):
    def register(function: Callable[[Ran, dict[str, Any]], None]):
        function.needs = needs
        CHECKS[block_id] = function
        return function
    return register


def caption_of(path: Path) -> str:
    """What the Inference API stand-in says of a picture (``tests/inference_server._image_to_text``)."""
    from tests.inference_server import _image_to_text

    return _image_to_text(path.read_bytes(), {})[0]["generated_text"]


@check("use-from-python-and-langchain-1")
def _tools(ran: Ran, place: dict[str, Any]) -> None:
    from langgraph.graph.state import CompiledStateGraph

    from hugginggpt.tools import task_table

    ns = ran.namespace
    assert ran.printed == [f"{len(task_table())} tasks"]
    assert [tool.name for tool in ns["tools"]] == ["image-to-text", "text-to-speech"]
    # the caller's relative path, read from the current directory; the model ran remotely
    assert ns["caption"]["text"] == caption_of(place["project"] / "examples" / "example.jpg") == "a 640x480 green picture"
    assert ns["caption"]["ran"]["backend"] == "remote"
    assert isinstance(ns["agent"], CompiledStateGraph) and "tools" in ns["agent"].nodes


@check("use-from-python-and-langchain-2")
def _workspace_per_call(ran: Ran, place: dict[str, Any]) -> None:
    (result,) = ran.values
    assert result["text"] == "a 640x480 green picture"
    assert result["ran"] == {"backend": "remote", "model": "Salesforce/blip-image-captioning-base"}  # the config's model
    assert ran.namespace["other"].inputs == ((place["project"] / "examples").resolve(),)


@check("use-from-python-and-langchain-3")
def _agents(ran: Ran, place: dict[str, Any]) -> None:
    from langchain_core.runnables import Runnable

    ns = ran.namespace
    (shown,) = ran.values
    output, plan, selections, results, trace = shown
    assert [step["task"] for step in plan] == ["image-to-text", "text-to-speech"]
    assert plan[0]["args"]["image"] == "examples/example.jpg"  # the file as the user named it
    assert set(selections) == {0, 1}
    assert results[0]["status"] == "ok" and results[0]["result"]["text"] == "a 640x480 green picture"
    assert results[1]["status"] == "ok" and Path(results[1]["result"]["audio"]).read_bytes()[:4] == b"RIFF"
    assert output.startswith("Answer: ") and "a 640x480 green picture" in output and results[1]["result"]["audio"] in output
    assert json.loads(Path(trace).read_text())["files"] == ["examples/example.jpg"]
    # the stage events, one name a line: a plan of one caption that ran
    assert ran.printed[:2] == ["plan", "selection"] and ran.printed[-1] == "final"
    assert "task_start" in ran.printed and "task_end" in ran.printed and "task_failed" not in ran.printed
    assert isinstance(ns["chain"], Runnable)


@check("use-from-python-and-langchain-4")
def _langgraph(ran: Ran, place: dict[str, Any]) -> None:
    from langchain_core.messages import AIMessage
    from langgraph.graph.state import CompiledStateGraph

    ns = ran.namespace
    (answer,) = ran.printed
    # drawn remotely (a grey picture: the prompt names no colour), then described
    assert answer.startswith("Answer: image: ") and answer.endswith("text: a 32x24 grey picture")
    assert isinstance(ns["state"]["messages"][-1], AIMessage)
    assert isinstance(ns["supervisor"], CompiledStateGraph)
    (tool,) = ns["supervisor"].nodes["tools"].bound.tools_by_name.values()
    assert tool.name == "hugginggpt"


@check("server-1", needs=("server",))
def _openai_client(ran: Ran, place: dict[str, Any]) -> None:
    (completion,) = ran.values
    assert completion.object == "chat.completion" and completion.model == "global"  # the agent that answered
    assert completion.choices[0].message.role == "assistant"
    assert completion.choices[0].message.content == "Answer: nothing to do"  # "..." asks for no task
    assert any(request["messages"][-1]["content"].startswith("...") for request in place["llm"].requests)


@check("controlnet-1")
def _controlnet(ran: Ran, place: dict[str, Any]) -> None:
    ns = ran.namespace
    edges = Image.open(ns["edges"])
    assert edges.format == "PNG" and edges.size == (640, 480)
    assert set(edges.convert("L").getdata()) <= {0, 255}  # OpenCV's Canny, here: a black and white map
    image = ns["image"]
    assert image["ran"] == {"backend": "remote", "model": "lllyasviel/sd-controlnet-canny"}
    assert Image.open(image["image"]).size == (640, 480)  # drawn along the map (the stand-in keeps its size)


@check("scale-out-model-inference-beyond-one-machine-1")
def _scale_out(ran: Ran, place: dict[str, Any]) -> None:
    from hugginggpt.tools import task_table

    ns = ran.namespace
    assert ns["executor"].remote.endpoint == "http://gpu-box:8080"
    assert [tool.name for tool in ns["tools"]] == list(task_table())
