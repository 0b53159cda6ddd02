"""The `hugginggpt` command through ``main([...])``: output, progress lines, exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import StructuredTool

from hugginggpt import build
from hugginggpt.cli.main import main
from hugginggpt.errors import LLMError
from hugginggpt.tools import task_table


@pytest.fixture(autouse=True)
def _clean_settings(monkeypatch, tmp_path):
    for var in ("HUGGINGGPT_LLM", "HUGGINGGPT_AGENT", "HUGGINGGPT_EXECUTION", "HUGGINGGPT_TRACE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(tmp_path / "config.toml"))
    (tmp_path / "config.toml").write_text("")


def reverse_tool() -> StructuredTool:
    def reverse(text: str) -> dict:
        """Reverse a text."""
        return {"text": text[::-1]}

    return StructuredTool.from_function(reverse, name="reverse-text")


@pytest.fixture
def scripted_react(monkeypatch):
    """The real ReAct agent, its LLM replaced by a script and its tools by one deterministic tool."""
    script = [
        AIMessage('Thought: reverse it\nAction: reverse-text\nAction Input: {"text": "hello"}'),
        AIMessage("Thought: I now know the final answer\nFinal Answer: olleh"),
    ]
    monkeypatch.setattr(build, "make_llm", lambda settings: FakeMessagesListChatModel(responses=script))
    monkeypatch.setattr(build, "make_tools", lambda settings, catalog=None: [reverse_tool()])


class StreamingAgent:
    """An agent whose stream is given: for paths that do not depend on any agent's logic."""

    def __init__(self, events=(), error: BaseException | None = None):
        self.events, self.error, self.requests = list(events), error, []

    def stream_stage_events(self, request):
        self.requests.append(request)
        yield from self.events
        if self.error:
            raise self.error
        yield {"event": "final", "output": {"output": f"answer {len(self.requests)}", "plan": [], "results": {}}}


def use_agent(monkeypatch, agent):
    monkeypatch.setattr(build, "make_llm", lambda settings: None)
    monkeypatch.setattr(build, "make_agent", lambda settings, llm: agent)


def test_run_prints_answer_and_progress(scripted_react, capsys):
    assert main(["run", "reverse hello", "--agent", "react"]) == 0
    out, err = capsys.readouterr()
    assert out == "olleh\n"
    assert "task 0 reverse-text: started" in err
    assert "task 0 reverse-text: ok" in err and ": olleh" in err


def test_run_json_prints_whole_output_and_trace_dir(scripted_react, capsys, tmp_path):
    runs = tmp_path / "runs"
    assert main(["run", "reverse hello", "--agent", "react", "--json", "-q", "--trace-dir", str(runs)]) == 0
    out, err = capsys.readouterr()
    output = json.loads(out)
    assert output["output"] == "olleh"
    assert [node["task"] for node in output["plan"]] == ["reverse-text"]
    assert output["results"]["0"]["status"] == "ok"
    assert Path(output["trace"]).is_file() and runs in Path(output["trace"]).parents
    assert err == ""


def test_run_failure_is_one_line_and_nothing_on_stdout(monkeypatch, capsys):
    use_agent(monkeypatch, StreamingAgent([{"event": "plan", "plan": [{"id": 0, "task": "x"}]}],
                                          error=LLMError("controller unreachable")))
    assert main(["run", "anything"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[-1] == "hugginggpt: error: controller unreachable"


def test_run_interrupted_exits_130(monkeypatch, capsys):
    use_agent(monkeypatch, StreamingAgent(error=KeyboardInterrupt()))
    assert main(["run", "anything"]) == 130
    assert capsys.readouterr().out == ""


def test_run_passes_existing_files_and_rejects_missing(monkeypatch, capsys, tmp_path):
    agent = StreamingAgent()
    use_agent(monkeypatch, agent)
    image = tmp_path / "a.png"
    image.write_bytes(b"png")
    assert main(["run", "describe", "--file", str(image)]) == 0
    assert agent.requests[0]["files"] == [str(image.resolve())]
    assert main(["run", "describe", "--file", str(tmp_path / "missing.png")]) == 1
    assert "input file not found" in capsys.readouterr().err


def failing_tool() -> StructuredTool:
    def shout(text: str) -> dict:
        """Shout a text."""
        raise ValueError("the loudspeaker is broken")

    return StructuredTool.from_function(shout, name="shout-text")


@pytest.fixture
def react_with(monkeypatch):
    """The real ReAct agent on a script of actions over a tool that works and one that always fails."""
    def use(*actions: str, answer: str = "done"):
        script = [AIMessage(f"Thought: go\nAction: {name}\nAction Input: {{\"text\": \"hello\"}}") for name in actions]
        script.append(AIMessage(f"Thought: I now know the final answer\nFinal Answer: {answer}"))
        monkeypatch.setattr(build, "make_llm", lambda settings: FakeMessagesListChatModel(responses=script))
        monkeypatch.setattr(build, "make_tools", lambda settings, catalog=None: [reverse_tool(), failing_tool()])
    return use


def test_run_exits_3_when_no_task_produced_a_result(react_with, capsys):
    react_with("shout-text", answer="I could not shout it")
    assert main(["run", "shout hello", "--agent", "react", "-q"]) == 3
    assert capsys.readouterr().out == "I could not shout it\n"  # the answer still goes to stdout
    assert main(["run", "shout hello", "--agent", "react", "-q", "--json"]) == 3
    output = json.loads(capsys.readouterr().out)
    assert output["status"] == "failed"
    assert [(r["task"], r["status"]) for r in output["results"].values()] == [("shout-text", "failed")]
    assert "loudspeaker is broken" in output["results"]["0"]["error"]


def test_run_partial_success_exits_0_and_json_lists_the_failure(react_with, capsys):
    react_with("reverse-text", "shout-text")
    assert main(["run", "reverse and shout hello", "--agent", "react", "-q", "--json"]) == 0
    output = json.loads(capsys.readouterr().out)
    assert output["status"] == "partial"
    assert sorted((r["task"], r["status"]) for r in output["results"].values()) == [
        ("reverse-text", "ok"), ("shout-text", "failed")]


def test_run_without_tasks_or_with_every_task_done_exits_0(react_with, scripted_react, capsys):
    assert main(["run", "reverse hello", "--agent", "react", "-q", "--json"]) == 0  # every task done
    assert json.loads(capsys.readouterr().out)["status"] == "ok"
    react_with(answer="hello to you")  # no task needed
    assert main(["run", "say hello", "--agent", "react", "-q", "--json"]) == 0
    output = json.loads(capsys.readouterr().out)
    assert (output["status"], output["results"], output["output"]) == ("ok", {}, "hello to you")


def test_run_help_lists_the_exit_codes(capsys):
    from hugginggpt.cli import exit_codes

    with pytest.raises(SystemExit) as info:
        main(["run", "--help"])
    assert info.value.code == 0
    page = capsys.readouterr().out
    block = page.split("exit status:\n", 1)[1].split("\n\n", 1)[0]
    assert [int(line.split()[0]) for line in block.splitlines() if line.startswith("  ") and line.split()[0].isdigit()] \
        == [0, 1, 2, 3, 130] == list(exit_codes.MEANINGS)


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "x", "--agent", "nosuch"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["models", "image-classification", "-k", "0"])
    assert info.value.code == 2


def test_chat_keeps_history_until_exit(monkeypatch, capsys):
    agent = StreamingAgent()
    use_agent(monkeypatch, agent)
    monkeypatch.setattr("sys.stdin", io.StringIO("first\n\nsecond\n/exit\nnever\n"))
    assert main(["chat", "-q"]) == 0
    assert capsys.readouterr().out == "answer 1\nanswer 2\n"
    assert [r["input"] for r in agent.requests] == ["first", "second"]
    assert agent.requests[0]["chat_history"] == []
    assert [m.content for m in agent.requests[1]["chat_history"]] == ["first", "answer 1"]


def test_chat_goes_on_after_a_failed_turn(monkeypatch, capsys):
    class FailsOnce(StreamingAgent):
        def stream_stage_events(self, request):
            if not self.requests:
                self.requests.append(request)
                raise LLMError("bad answer")
            yield from super().stream_stage_events(request)

    use_agent(monkeypatch, FailsOnce())
    monkeypatch.setattr("sys.stdin", io.StringIO("one\ntwo\n"))
    assert main(["chat", "-q"]) == 0
    out, err = capsys.readouterr()
    assert out == "answer 2\n" and "hugginggpt: error: bad answer" in err


def test_tools_lists_every_task(capsys):
    assert main(["tools"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted(task_table())
    line = next(l for l in lines if l.startswith("image-classification "))
    assert "image*:image" in line


def test_tools_json_and_one_task(capsys):
    assert main(["tools", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == set(task_table())
    assert data["text-classification"]["args"][0]["name"] == task_table()["text-classification"].args[0].name
    assert main(["tools", "text-classification"]) == 0
    detail = capsys.readouterr().out
    assert detail.startswith("text-classification (nlp)") and "required" in detail
    assert main(["tools", "feature-extraction"]) == 0  # what comes back, where the output kind does not say
    assert "  outputs: data (data: one vector for the whole text, pooled as the model's" in capsys.readouterr().out


def test_unknown_task_exits_1_with_suggestion(capsys):
    assert main(["tools", "image-clasification"]) == 1
    assert "did you mean image-classification" in capsys.readouterr().err
    assert main(["models", "image-clasification"]) == 1


def test_models_shows_candidates(capsys):
    from hugginggpt.tools import ModelCatalog

    expected = [c.id for c in ModelCatalog().candidates("image-classification", 2)]
    assert main(["models", "image-classification", "-k", "2"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == expected
    assert main(["models", "image-classification", "-k", "2", "--json"]) == 0
    assert [c["id"] for c in json.loads(capsys.readouterr().out)] == expected


def test_version_prints_the_installed_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"hugginggpt {version('hugginggpt')}"


def test_package_is_marked_typed_and_ships_the_marker():
    import tomllib

    import hugginggpt

    assert (Path(hugginggpt.__file__).parent / "py.typed").is_file()
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["hugginggpt"]
