"""Fault injection: tools that raise, hang, return the wrong kind or far too much; an LLM that fails or
answers nothing; a remote endpoint that throttles, errors, talks garbage or hangs up; a run cancelled
half way. The failing task and its dependants are reported, the rest of the plan finishes, the
response is told what failed, and the trace is always complete JSON.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from hugginggpt.agent.global_plan import GlobalPlanAgent
from hugginggpt.agent.react import ReActAgent
from hugginggpt.errors import LLMError, PlanError, RemoteInferenceError, TaskError
from hugginggpt.tools import build_tools, get_task
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.executors.remote import RemoteExecutor
from hugginggpt.tools.resources import Workspace
from tests.inference_server import InferenceServer

HUGE = 5_000_000


class Chat(FakeMessagesListChatModel):
    """Answers from ``responses`` in order; an entry in ``fail_at`` raises instead. Records prompts."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    fail_at: dict[int, Any] = Field(default_factory=dict)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.prompts.append(list(messages))
        turn = len(self.prompts) - 1
        if turn in self.fail_at:
            raise self.fail_at[turn]
        return ChatResult(generations=[ChatGeneration(message=self.responses[min(turn, len(self.responses) - 1)])])


def chat(*answers: Any, fail_at: dict[int, BaseException] | None = None) -> Chat:
    texts = [a if isinstance(a, str) else json.dumps(a) for a in answers]
    return Chat(responses=[AIMessage(t) for t in texts], fail_at=fail_at or {})


class TextArgs(BaseModel):
    text: str


class ImageArgs(BaseModel):
    image: str


def _crash(text: str) -> dict:
    raise RuntimeError("an untyped bug\nwith a second line")


def _explode(text: str) -> dict:
    raise TaskError("explode", "the model crashed")


async def _hang(text: str) -> dict:
    await asyncio.sleep(30)
    return {"text": "never"}


def fault_tools() -> list[StructuredTool]:
    def tool(name: str, func=None, coroutine=None, schema=TextArgs) -> StructuredTool:
        return StructuredTool.from_function(func=func, coroutine=coroutine, name=name, description=name,
                                            args_schema=schema)

    return [
        tool("echo", lambda text: {"text": text.upper()}),
        tool("explode", _explode),
        tool("crash", _crash),
        tool("hang", coroutine=_hang),
        tool("wrong", lambda text: ["not", "a", "dict"]),
        tool("huge", lambda text: {"text": "x" * HUGE}),
        tool("painter", lambda text: {"text": "I painted nothing"}),
        tool("viewer", lambda image: {"text": f"saw {image}"}, schema=ImageArgs),
    ]


def step(task: str, id: int, **args: Any) -> dict:
    return {"task": task, "id": id, "dep": [], "args": args}


def only_trace(root: Path) -> dict:
    (path,) = root.glob("*/trace.json")
    return json.loads(path.read_text())


# ---------------------------------------------------------------------------------- tool faults


@pytest.mark.timeout(60)
async def test_failing_tasks_are_reported_and_the_rest_of_the_plan_finishes(tmp_path) -> None:
    plan = [
        step("echo", 0, text="hello"),
        step("explode", 1, text="<resource>-0"),  # (at most MAX_TASKS = 10 steps: a plan is capped)
        step("hang", 3, text="x"),
        step("echo", 4, text="after <resource>-3"),
        step("crash", 5, text="boom"),
        step("wrong", 6, text="x"),
        step("huge", 7, text="x"),
        step("painter", 8, text="a cat"),
        step("viewer", 9, image="<resource>-8"),
        step("echo", 10, text="<resource>-6 and <resource>-0"),
    ]
    llm = chat(plan, "Some tasks failed.")
    agent = GlobalPlanAgent(llm, tools=fault_tools(), task_timeout=0.5, workspace_root=tmp_path, structured=False)
    started = time.perf_counter()
    output = await agent.ainvoke("do everything")
    assert time.perf_counter() - started < 15

    results = output["results"]
    status = {i: r["status"] for i, r in results.items()}
    assert status == {0: "ok", 1: "failed", 3: "failed", 4: "skipped", 5: "failed", 6: "ok",
                      7: "ok", 8: "ok", 9: "failed", 10: "ok"}
    assert results[1]["error"] == "explode: the model crashed"
    assert "task 3 (hang) failed" in results[4]["error"]
    assert "timed out after 0.5 s" in results[3]["error"]
    assert results[5]["error"] == "crash: RuntimeError: an untyped bug"  # one line naming the tool, no traceback
    assert results[6]["result"] == {"text": "['not', 'a', 'dict']"}
    assert "no image output" in results[9]["error"] and "<resource>-8" in results[9]["error"]
    assert results[10]["result"] == {"text": "['NOT', 'A', 'DICT'] AND HELLO"}

    # The answer says what failed, written from the outcomes (not by the LLM, which sees only the
    # tasks that succeeded), and a huge output does not flood the response prompt.
    response_prompt = "\n".join(str(m.content) for m in llm.prompts[-1])
    for fragment in ("explode: the model crashed", "timed out", "was skipped", "no image output"):
        assert fragment in output["output"]
        assert fragment not in response_prompt
    assert "--local-model" not in output["output"]  # no failure here is about a model's availability
    assert len(response_prompt) < 30_000

    trace = only_trace(tmp_path)
    assert {int(k): v["status"] for k, v in trace["results"].items()} == status
    assert [e["id"] for e in trace["events"] if e["event"] == "task_failed"].count(3) == 1


@pytest.mark.timeout(60)
async def test_a_failed_reference_to_a_remote_task_leaves_its_siblings_alone(tmp_path) -> None:
    """A remote endpoint answering 500 fails one task (and its dependant); the others still run."""

    class PerTaskRemote(Executor):
        name = "per-task-remote"

        def __init__(self, url: str):
            self.url = url

        def can_run(self, task: str, model: str | None) -> bool:
            return True

        def run(self, call: TaskCall) -> dict:
            return RemoteExecutor(f"{self.url}/{call.task.name}", max_retries=2, backoff=0.01).run(call)

    with InferenceServer() as server:
        server.script(500)
        tools = build_tools(["text-classification", "summarization"], executor=PerTaskRemote(server.url))
        plan = [step("text-classification", 0, text="I love it"),
                step("summarization", 1, text="<resource>-0"),
                step("text-classification", 2, text="this is great")]
        agent = GlobalPlanAgent(chat(plan, "Task 0 failed."), tools=tools, max_concurrency=1,
                                workspace_root=tmp_path, structured=False)
        output = await agent.ainvoke("classify both")
    results = output["results"]
    assert [results[i]["status"] for i in range(3)] == ["failed", "skipped", "ok"]
    assert "HTTP 500" in results[0]["error"] and results[2]["result"]["text"] == "POSITIVE"
    assert len([r for r in server.requests if r["method"] == "POST"]) == 2  # a 500 is not retried


# ----------------------------------------------------------------------------------- LLM faults


@pytest.mark.timeout(30)
@pytest.mark.parametrize("error", [TimeoutError("read timed out"), ConnectionError("connection refused"),
                                   RuntimeError("provider exploded")])
async def test_a_failing_planning_llm_is_an_llm_error_with_a_trace(tmp_path, error) -> None:
    agent = GlobalPlanAgent(chat("unused", fail_at={0: error}), tools=fault_tools(), workspace_root=tmp_path,
                            structured=False)
    with pytest.raises(LLMError, match=type(error).__name__):
        await agent.ainvoke("anything")
    trace = only_trace(tmp_path)
    assert trace["error"].startswith("LLMError") and str(error) in trace["error"]


@pytest.mark.timeout(30)
async def test_an_llm_that_answers_nothing_is_a_plan_error(tmp_path) -> None:
    llm = chat("", "")
    agent = GlobalPlanAgent(llm, tools=fault_tools(), workspace_root=tmp_path, structured=False)
    with pytest.raises(PlanError, match="failed twice"):
        await agent.ainvoke("anything")
    assert len(llm.prompts) == 2  # asked once more, then gave up
    trace = only_trace(tmp_path)
    assert trace["error"].startswith("PlanError")
    assert [(c["stage"], c["output"]) for c in trace["llm_calls"]] == [("planning", ""), ("planning-reask", "")]


@pytest.mark.timeout(30)
async def test_a_failing_response_llm_still_leaves_the_results_in_the_trace(tmp_path) -> None:
    llm = chat([step("echo", 0, text="hi")], fail_at={1: TimeoutError("no answer")})
    agent = GlobalPlanAgent(llm, tools=fault_tools(), workspace_root=tmp_path, structured=False)
    with pytest.raises(LLMError, match="response"):
        await agent.ainvoke("shout hi")
    trace = only_trace(tmp_path)
    assert trace["results"]["0"]["result"] == {"text": "HI"}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("empty", ["", "  \n "])
async def test_an_empty_response_still_says_what_failed(tmp_path, empty) -> None:
    llm = chat([step("explode", 0, text="x"), step("echo", 1, text="hi")], empty)
    agent = GlobalPlanAgent(llm, tools=fault_tools(), workspace_root=tmp_path, structured=False)
    output = await agent.ainvoke("explode")
    assert "Task 0 (explode) failed: explode: the model crashed." in output["output"]
    assert "task 1 (echo): text: HI" in output["output"]
    assert output["output"].startswith(only_trace(tmp_path)["response_fallback"])  # + the failure report


# ---------------------------------------------------------------------------------- cancellation


@pytest.mark.timeout(30)
async def test_a_cancelled_run_leaves_a_complete_trace(tmp_path) -> None:
    plan = [step("echo", 0, text="first"), step("hang", 1, text="forever"), step("echo", 2, text="<resource>-1")]
    agent = GlobalPlanAgent(chat(plan, "unused"), tools=fault_tools(), task_timeout=60, workspace_root=tmp_path,
                            structured=False)
    run = asyncio.create_task(agent.ainvoke("start and wait"))
    deadline = time.monotonic() + 10
    while not agent.llm.prompts and time.monotonic() < deadline:  # wait until the plan was asked for
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # task 0 ends, task 1 hangs
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    trace = only_trace(tmp_path)
    assert trace["error"].startswith("CancelledError")
    assert [t["id"] for t in trace["plan"]] == [0, 1, 2]
    assert trace["results"]["0"]["status"] == "ok" and "1" not in trace["results"]
    started = [e["id"] for e in trace["events"] if e["event"] == "task_start"]
    assert started == [0, 1] or sorted(started) == [0, 1]
    assert not list(tmp_path.glob("*/.trace-*"))  # no temporary file left behind


# ------------------------------------------------------------------------------ remote endpoint


@pytest.fixture
def server():
    with InferenceServer() as srv:
        yield srv


def remote_call(server: InferenceServer, tmp_path: Path, **kwargs) -> tuple[RemoteExecutor, TaskCall]:
    kwargs.setdefault("backoff", 0.01)
    executor = RemoteExecutor(f"{server.url}/text-classification", token="hf_secret_abcdefgh", **kwargs)
    call = TaskCall(task=get_task("text-classification"), args={"text": "I love it", "top_k": 2},
                    workspace=Workspace(tmp_path / "run"))
    return executor, call


def posts(server: InferenceServer) -> int:
    return len([r for r in server.requests if r["method"] == "POST"])


@pytest.mark.timeout(30)
@pytest.mark.parametrize("faults", [(429,), (503, 503), ("close",), (429, "close", 503)])
def test_throttling_and_dropped_connections_are_retried(server, tmp_path, faults) -> None:
    server.script(*faults)
    executor, call = remote_call(server, tmp_path, max_retries=3)
    assert executor.run(call)["text"] == "POSITIVE"
    assert posts(server) == len(faults) + 1


@pytest.mark.timeout(30)
def test_retries_are_bounded(server, tmp_path) -> None:
    server.script(503, 503, 503, 503, 503)
    executor, call = remote_call(server, tmp_path, max_retries=2)
    with pytest.raises(RemoteInferenceError) as caught:
        executor.run(call)
    assert caught.value.status_code == 503 and posts(server) == 3


@pytest.mark.timeout(30)
def test_backoff_grows_between_retries(server, tmp_path) -> None:
    server.script(429, 429)  # the test server sends Retry-After: 0, so our own backoff decides
    executor, call = remote_call(server, tmp_path, max_retries=2, backoff=0.2)
    started = time.perf_counter()
    executor.run(call)
    assert time.perf_counter() - started >= 0.2 * 0.5 + 0.4 * 0.5  # jitter keeps at least half of each wait


@pytest.mark.timeout(30)
@pytest.mark.parametrize("fault, match", [(500, "HTTP 500"), (400, "HTTP 400"), ("garbage", "unusable answer")])
def test_server_errors_and_garbage_are_not_retried(server, tmp_path, fault, match) -> None:
    server.script(fault)
    executor, call = remote_call(server, tmp_path, max_retries=3)
    with pytest.raises(RemoteInferenceError, match=match) as caught:
        executor.run(call)
    assert posts(server) == 1
    assert "hf_secret_abcdefgh" not in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.timeout(30)
def test_a_slow_endpoint_times_out(server, tmp_path) -> None:
    server.slow_seconds = 3
    server.script("slow")
    executor, call = remote_call(server, tmp_path, max_retries=0, timeout=0.5)
    started = time.perf_counter()
    with pytest.raises(RemoteInferenceError, match="within 0.5 s"):
        executor.run(call)
    assert time.perf_counter() - started < 2.5


# ------------------------------------------------------------------------- tool-loop agents


@pytest.mark.timeout(30)
def test_react_turns_a_raising_tool_into_an_observation(tmp_path) -> None:
    llm = chat("Action: explode\nAction Input: {\"text\": \"x\"}", "Action: crash\nAction Input: {\"text\": \"y\"}",
               "Final Answer: both failed")
    output = ReActAgent(llm, fault_tools(), workspace_root=tmp_path).invoke("try")
    assert output["output"] == "both failed"
    assert [(r["task"], r["status"]) for r in output["results"].values()] == [("explode", "failed"), ("crash", "failed")]
    assert "the model crashed" in str(llm.prompts[1][-1].content)
    json.loads(Path(output["trace"]).read_text())


def stuck_tool() -> StructuredTool:
    def stuck(text: str) -> dict:
        time.sleep(4)
        return {"text": "late"}

    return StructuredTool.from_function(stuck, name="stuck", description="stuck", args_schema=TextArgs)


def assert_stopped_by_time_budget(output: dict) -> None:
    assert output["output"].startswith("stopped: ran out of the time budget of 1 s.")
    (outcome,) = output["results"].values()
    assert outcome["status"] == "failed" and outcome["error"].startswith("stuck: timed out after")


@pytest.mark.timeout(30)
def test_react_stops_a_hanging_tool_at_its_time_budget(tmp_path) -> None:
    llm = chat("Action: stuck\nAction Input: {\"text\": \"x\"}", "Final Answer: done")
    started = time.perf_counter()
    output = ReActAgent(llm, [stuck_tool()], time_budget_s=1, workspace_root=tmp_path).invoke("go")
    assert time.perf_counter() - started < 3
    assert_stopped_by_time_budget(output)
    assert len(llm.prompts) == 1  # the spent budget stops the run before the next LLM call


class ToolCallingChat(FakeMessagesListChatModel):
    """Replays AI messages that carry tool calls; records what it was sent."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.received.append(list(messages))
        message = self.responses[min(len(self.received) - 1, len(self.responses) - 1)]
        return ChatResult(generations=[ChatGeneration(message=message)])


def tool_call(name: str, call_id: str, **args: Any) -> dict:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


@pytest.mark.timeout(30)
def test_function_calling_reports_raising_tools_and_finishes(tmp_path) -> None:
    from hugginggpt.agent.function_calling import FunctionCallingAgent

    llm = ToolCallingChat(responses=[
        AIMessage("", tool_calls=[tool_call("explode", "a", text="x"), tool_call("crash", "b", text="y"),
                                  tool_call("echo", "c", text="z")]),
        AIMessage("two failed, one worked"),
    ])
    output = FunctionCallingAgent(llm, fault_tools(), workspace_root=tmp_path).invoke("try all")
    assert output["output"] == "two failed, one worked"
    assert sorted((r["task"], r["status"]) for r in output["results"].values()) == [
        ("crash", "failed"), ("echo", "ok"), ("explode", "failed")]
    observations = {m.tool_call_id: str(m.content) for m in llm.received[1] if m.type == "tool"}
    assert "the model crashed" in observations["a"] and "untyped bug" in observations["b"]
    json.loads(Path(output["trace"]).read_text())


@pytest.mark.timeout(30)
def test_function_calling_stops_a_hanging_tool_at_its_time_budget(tmp_path) -> None:
    from hugginggpt.agent.function_calling import FunctionCallingAgent

    llm = ToolCallingChat(responses=[AIMessage("", tool_calls=[tool_call("stuck", "a", text="x")]),
                                     AIMessage("done")])
    started = time.perf_counter()
    output = FunctionCallingAgent(llm, [stuck_tool()], time_budget_s=1, workspace_root=tmp_path).invoke("go")
    assert time.perf_counter() - started < 3
    assert_stopped_by_time_budget(output)
    assert len(llm.received) == 1


@pytest.mark.timeout(60)
def test_function_calling_bounds_a_huge_observation(tmp_path) -> None:
    from hugginggpt.agent.function_calling import FunctionCallingAgent

    llm = ToolCallingChat(responses=[AIMessage("", tool_calls=[tool_call("huge", "a", text="x")]),
                                     AIMessage("done")])
    output = FunctionCallingAgent(llm, fault_tools(), workspace_root=tmp_path).invoke("go big")
    sent = sum(len(str(m.content)) for m in llm.received[1])
    assert sent < 100_000
    (observation,) = [str(m.content) for m in llm.received[1] if m.type == "tool"]
    clipped = re.search(r" \.\.\. \(truncated, (\d+) characters\)$", observation)
    assert clipped and int(clipped.group(1)) > HUGE and len(observation) < 4100
    assert output["results"][0]["result"] == {"text": "x" * HUGE}  # the results keep the whole envelope


def test_the_trace_is_strict_json_even_with_nan_in_a_plan(tmp_path) -> None:
    from hugginggpt.agent.trace import Trace

    values = [float("nan"), float("inf"), -float("inf"), 0.5]
    trace = Trace(tmp_path / "trace.json", plan=[{"task": "x", "args": {"threshold": v}} for v in values])
    text = trace.write().read_text()

    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    plan = json.loads(text, parse_constant=refuse)["plan"]
    assert [p["args"]["threshold"] for p in plan] == ["NaN", "Infinity", "-Infinity", 0.5]
