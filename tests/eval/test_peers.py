"""The ecosystem's agents in ``compare`` (eval/peers.py) on scripted chat models, planning-only mode.

Each peer gets the placeholder tools; a scripted controller makes a two-step plan (draw a cat, then
classify the picture) in the peer's own protocol: the planner's JSON, tool calls, smolagents' tool
calls, a code block. The recorded plan has both tasks and the second one reads ``<resource>-0``.
"""

from __future__ import annotations

import csv
import json
from importlib.util import find_spec

import pytest
from langchain_core.messages import AIMessage
from pydantic import Field

from hugginggpt.cli.main import main
from hugginggpt.errors import HuggingGPTError
from hugginggpt.eval import peers
from hugginggpt.eval.compare import Comparison, build_agent, call_digest, check_agents, run_request
from hugginggpt.eval.peers import PeerMissingError, with_reference_deps

from .test_compare import Scripted as ScriptedModel

#: the tests that run a peer need the `peers` extra (CI installs it); the missing-package ones do not
needs_peers = pytest.mark.skipif(find_spec("langchain_experimental") is None or find_spec("smolagents") is None,
                                 reason="the peers extra is not installed: pip install 'hugginggpt[peers]'")

TASKS = ["text-to-image", "image-classification", "text-to-speech"]


class Scripted(ScriptedModel):
    """The comparison tests' scripted model, remembering the tools each bind offered it."""

    bound: list = Field(default_factory=list)

    def bind_tools(self, tools, **kwargs):
        self.bound.append((tools, kwargs))
        return self


def _call(name, call_id, **args):
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


#: the placeholder file name of text-to-image {"text": "a cat"}
CAT_IMAGE = f"text-to-image-{call_digest({'text': 'a cat'})}.png"
TWO_STEPS = [("text-to-image", {"text": "a cat"}), ("image-classification", {"image": "<resource>-0"})]

SCRIPTS = {
    # LangChain's HuggingGPT planner answers a JSON list, references spelled its own way (<resource-0>)
    "langchain-hugginggpt": [AIMessage(json.dumps([
        {"task": "text-to-image", "id": 0, "dep": [-1], "args": {"text": "a cat"}},
        {"task": "image-classification", "id": 1, "dep": [0], "args": {"image": "<resource-0>"}}]))],
    "create-agent": [
        AIMessage("", tool_calls=[_call("text-to-image", "c1", text="a cat")]),
        AIMessage("", tool_calls=[_call("image-classification", "c2", image=CAT_IMAGE)]),
        AIMessage("It is a cat."),
    ],
    # smolagents' names are identifiers; its answer is the final_answer tool
    "smolagents-tools": [
        AIMessage("", tool_calls=[_call("text_to_image", "c1", text="a cat")]),
        AIMessage("", tool_calls=[_call("image_classification", "c2", image=CAT_IMAGE)]),
        AIMessage("", tool_calls=[_call("final_answer", "c3", answer="a cat")]),
    ],
    "smolagents-code": [AIMessage(
        "Thought: draw it, then classify it.\n<code>\nimg = text_to_image(text=\"a cat\")\n"
        "label = image_classification(image=img)\nfinal_answer(label)\n</code>")],
}

UNREADABLE = {
    "langchain-hugginggpt": [AIMessage("I would draw a cat first.")],
    "create-agent": [AIMessage("", invalid_tool_calls=[
        {"name": "text-to-image", "args": '{"text": "a cat"', "id": "c1", "error": "bad JSON",
         "type": "invalid_tool_call"}])],
    "smolagents-tools": [AIMessage("I would draw a cat first."),
                         AIMessage("", tool_calls=[_call("final_answer", "c1", answer="sorry")])],
    "smolagents-code": [AIMessage("I don't know"), AIMessage("<code>\nfinal_answer('sorry')\n</code>")],
}


async def _plan(name, responses, tmp_path):
    llm = Scripted(responses=responses)
    agent = build_agent(name, llm, "plan", tmp_path, tasks=TASKS)
    outcome = await run_request(agent, "Draw a cat and tell me what it is.", "plan")
    assert llm.i == len(responses)  # every scripted answer was used, no more
    return outcome


@needs_peers
@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_a_peer_two_step_plan_is_recorded_as_ours(name, tmp_path):
    outcome = await _plan(name, SCRIPTS[name], tmp_path)

    assert outcome["error"] is None and outcome["parse_errors"] == 0
    plan = outcome["plan"]
    assert [(n["task"], n["args"]) for n in plan] == TWO_STEPS
    assert [n["id"] for n in plan] == [0, 1] and 0 in plan[1]["dep"]
    assert outcome["llm_calls"] == len(SCRIPTS[name]) and outcome["prompt_tokens"] == 100 * len(SCRIPTS[name])


@needs_peers
@pytest.mark.parametrize("name", list(UNREADABLE))
async def test_an_unreadable_answer_is_a_parse_failure(name, tmp_path):
    outcome = await _plan(name, UNREADABLE[name], tmp_path)

    assert outcome["parse_errors"] >= 1 and outcome["plan"] == []


@needs_peers
async def test_a_peer_that_raises_is_recorded_with_the_reason(tmp_path):
    outcome = await _plan("create-agent", [], tmp_path)  # the model fails on its first call

    assert outcome["error"] and "scripted" in outcome["error"] and outcome["parse_errors"] == 0


@needs_peers
async def test_a_peer_that_loops_is_stopped_and_recorded_with_the_reason(tmp_path):
    loop = [AIMessage("", tool_calls=[_call("text-to-speech", f"c{i}", text=f"hello {i}")]) for i in range(30)]
    llm = Scripted(responses=loop)
    agent = build_agent("create-agent", llm, "plan", tmp_path, tasks=TASKS)
    outcome = await run_request(agent, "Say hello.", "plan")

    assert "recursion" in outcome["error"].lower() and "\n" not in outcome["error"]
    assert outcome["llm_calls"] == peers.MAX_LLM_CALLS and len(outcome["plan"]) == peers.MAX_LLM_CALLS


class Slow(Scripted):
    """A scripted model taking ``delay`` seconds a call (the embedded model: one call at a time)."""

    delay: float = 0.3

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        import time

        time.sleep(self.delay)
        return super()._generate(messages, stop, run_manager, **kwargs)


@needs_peers
@pytest.mark.parametrize("name", ["smolagents-code", "smolagents-tools"])
async def test_a_timed_out_peer_stops_before_the_next_request_starts(name, tmp_path):
    import asyncio

    step = {"smolagents-code": lambda i: AIMessage(f"<code>\nx = text_to_speech(text='hello {i}')\n</code>"),
            "smolagents-tools": lambda i: AIMessage("", tool_calls=[_call("text_to_speech", f"c{i}", text=f"hi {i}")])}
    llm = Slow(responses=[step[name](i) for i in range(peers.MAX_STEPS)])
    agent = build_agent(name, llm, "plan", tmp_path, tasks=TASKS)
    # a timeout of a few calls: long enough for the first call to finish on a loaded 2-core machine
    outcome = await run_request(agent, "Say hello forever.", "plan", timeout=1.2)

    assert outcome["error"].startswith("timeout")
    calls = llm.i
    assert 1 <= calls <= 5  # the call in progress at the timeout finishes; no further call is made
    await asyncio.sleep(4 * llm.delay)
    assert llm.i == calls  # nothing of the run goes on after it was recorded


@needs_peers
async def test_the_tool_calling_peers_see_our_schemas(tmp_path):
    llm = Scripted(responses=SCRIPTS["smolagents-tools"])
    agent = build_agent("smolagents-tools", llm, "plan", tmp_path, tasks=TASKS)
    await run_request(agent, "Draw a cat and tell me what it is.", "plan")
    schemas, _ = llm.bound[-1]
    by_name = {s["function"]["name"]: s["function"] for s in schemas}
    assert {"text_to_image", "image_classification", "final_answer"} <= set(by_name)
    assert by_name["text_to_image"]["parameters"]["required"] == ["text"]  # the optional prompt is optional


def test_a_spelled_reference_is_an_edge():
    plan = [{"task": "a", "id": 0, "dep": [], "args": {}}, {"task": "b", "id": 1, "dep": [], "args": {"x": "<resource-0>"}}]
    assert with_reference_deps(plan)[1] == {"task": "b", "id": 1, "dep": [0], "args": {"x": "<resource>-0"}}


@needs_peers
def test_peers_in_the_comparison_count_parse_failures_apart(tmp_path, dataset):
    models = {
        "langchain-hugginggpt": Scripted(responses=[*SCRIPTS["langchain-hugginggpt"], AIMessage("no plan")]),
        "create-agent": Scripted(responses=[*SCRIPTS["create-agent"],
                                            AIMessage("", tool_calls=[_call("text-to-speech", "c3", text="hello")]),
                                            AIMessage("Done.")]),
    }
    out = tmp_path / "out"
    comparison = Comparison(dataset, llm=None, out=out, agents=list(models), mode="plan", progress=False,
                            factory=lambda name, llm, mode, root, tasks=None: build_agent(name, models[name], mode,
                                                                                          root, tasks))
    reports = comparison.run(dataset.select())

    overall = reports["create-agent"].scores["overall_overall"]
    assert (overall.node_f1, overall.edge_f1) == (1.0, 1.0)
    assert reports["create-agent"].summary()["parse_failures"] == 0
    planner = reports["langchain-hugginggpt"]
    assert planner.parse_failures == 1 and planner.failures == 0
    row = {r["id"]: r for r in planner.rows}["b"]
    assert row["harness"]["parse_errors"] == 1 and row["harness"]["raw_outputs"] == ["no plan"]
    assert row["harness"]["error"].startswith("parse failure")
    assert planner.scores["chain_overall"].edge_f1 == 1.0
    with (out / "metrics.csv").open() as fh:
        table = {(r["agent"], r["group"]): r for r in csv.DictReader(fh)}
    assert table[("langchain-hugginggpt", "overall_overall")]["parse_failures"] == "1"
    assert table[("langchain-hugginggpt", "overall_overall")]["failures"] == "0"


def _fail_import(monkeypatch, missing):
    real = peers.importlib.import_module

    def fake(name, *args, **kwargs):
        if name.split(".")[0] == missing:
            raise ModuleNotFoundError(f"No module named '{missing}'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(peers.importlib, "import_module", fake)


@pytest.mark.parametrize(("name", "package"), [("smolagents-code", "smolagents"),
                                               ("langchain-hugginggpt", "langchain-experimental")])
def test_a_missing_peer_package_is_one_line_naming_the_extra(monkeypatch, name, package):
    _fail_import(monkeypatch, package.replace("-", "_"))
    with pytest.raises(PeerMissingError) as info:
        check_agents(["global", name], "plan")
    message = str(info.value)
    assert "\n" not in message and package in message and "hugginggpt[peers]" in message and name in message


def test_the_cli_says_a_missing_peer_in_one_line(monkeypatch, tmp_path, capsys):
    _fail_import(monkeypatch, "smolagents")
    code = main(["compare", "--data", str(tmp_path), "--llm", "openai:none", "--agents", "global,smolagents-tools"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1
    assert "smolagents" in err and "hugginggpt[peers]" in err


def test_peers_are_compared_in_plan_mode_only(tmp_path):
    with pytest.raises(HuggingGPTError, match="--mode plan only"):
        check_agents(["create-agent"], "full")
    with pytest.raises(HuggingGPTError, match="plan only"):
        build_agent("create-agent", Scripted(responses=[]), "full", tmp_path)
    with pytest.raises(HuggingGPTError, match="unknown agent"):
        check_agents(["autogpt"], "plan")


@needs_peers
def test_every_task_tool_becomes_a_smolagents_tool(tmp_path):
    from smolagents import Tool
    from smolagents.models import get_tool_json_schema

    from hugginggpt.eval.compare import placeholder_tools
    from hugginggpt.eval.peers import smol_tool

    tools = placeholder_tools(None, root=tmp_path)
    with pytest.raises(Exception, match="valid Python identifier"):  # smolagents' own bridge refuses our names
        Tool.from_langchain(tools[0])
    converted = [smol_tool(tool) for tool in tools]
    assert all(t.name.isidentifier() for t in converted) and len({t.name for t in converted}) == len(tools)
    schemas = {t.name: get_tool_json_schema(t)["function"]["parameters"] for t in converted}
    assert schemas["text_to_image"]["properties"]["negative_prompt"]["nullable"] is True
    assert schemas["table_question_answering"]["properties"]["table"]["type"] == ["object", "string"]


async def test_our_react_agent_s_unreadable_turns_are_counted_the_same_way(tmp_path):
    llm = Scripted(responses=[
        AIMessage("Thought: I will draw a cat."),  # neither an action nor an answer
        AIMessage('Thought: draw it\nAction: text-to-image\nAction Input: {"text": "a cat"}'),
        AIMessage("Thought: done\nFinal Answer: a cat"),
    ])
    agent = build_agent("react", llm, "plan", tmp_path, tasks=TASKS)
    outcome = await run_request(agent, "Draw a cat.", "plan")

    assert outcome["error"] is None and outcome["parse_errors"] == 1
    assert [n["task"] for n in outcome["plan"]] == ["text-to-image"]
