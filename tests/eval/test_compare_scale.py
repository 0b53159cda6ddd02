"""The comparison at scale against the OpenAI-compatible stand-in: the same output whatever the
concurrency and the shards, resuming, failures with their reason, 429s retried, requests in flight
bounded, the embedded controller serialised."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import httpx
import openai
import pytest

from hugginggpt.eval.compare import Comparison, answers_one_call_at_a_time
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.rate_limit import retry_after
from hugginggpt.eval.shards import Shard, merge
from hugginggpt.errors import HuggingGPTError
from hugginggpt.llm import load_llm
from tests.openai_server import OpenAIServer

AGENTS = ["global", "react", "tools"]
#: what differs between two runs of the same requests: time
TIMINGS = {"seconds", "median_seconds"}


def chosen(taskbench, count=9):
    return [s for s in taskbench.select(types=["chain", "dag"], seed=3)][:count]


def gold_plans(taskbench, samples):
    mapping = TaskBenchMapping(taskbench.tools)
    return {s.request: mapping.sample_to_plan(s.nodes) for s in samples}


def stand_in_llm(server, **kw):
    return load_llm("openai:stand-in", base_url=server.url, api_key="unused", **kw)


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def folder_contents(out: Path) -> dict:
    """Everything a comparison folder says, timings left out (the latency plot is all timings)."""
    predictions = {p.name: [without_timings(json.loads(line)) for line in p.read_text().splitlines()]
                   for p in sorted((out / "predictions").glob("*.json"))}
    with (out / "metrics.csv").open() as fh:
        table = [without_timings(row) for row in csv.DictReader(fh)]
    summary = without_timings(json.loads((out / "summary.json").read_text()))
    overview = [line.rsplit("|", 5)[0] for line in (out / "overview.md").read_text().splitlines()]  # to LLM calls
    plots = {name: (out / name).read_bytes() for name in ("metrics.png", "llm_calls.png")}
    return {"predictions": predictions, "table": table, "summary": summary, "overview": overview, "plots": plots}


@pytest.fixture(scope="module")
def runs(taskbench, tmp_path_factory):
    """The same requests compared four ways: one at a time, four at a time, and in two shards merged."""
    from hugginggpt.eval.plots import write_plots

    samples = chosen(taskbench)
    root = tmp_path_factory.mktemp("scale")
    peaks = {}
    with OpenAIServer(plans=gold_plans(taskbench, samples), latency=0.02) as server:
        llm = stand_in_llm(server)
        for name, concurrency, shard in [("n1", 1, None), ("n4", 4, None), ("s1", 3, Shard(1, 2)),
                                         ("s2", 2, Shard(2, 2))]:
            server.peak = 0
            comparison = Comparison(taskbench, llm, root / name, agents=AGENTS, concurrency=concurrency,
                                    shard=shard, resamples=50)
            comparison.run(samples)
            write_plots(comparison)
            peaks[name] = server.peak
    report = merge([root / "s2", root / "s1"], root / "merged", resamples=50)
    write_plots(report)
    return root, peaks, samples


def test_concurrency_gives_the_same_predictions_tables_and_plots(runs):
    root, peaks, samples = runs
    assert peaks["n1"] == 1 and peaks["n4"] == 4  # four requests really were in flight at once
    one, four = folder_contents(root / "n1"), folder_contents(root / "n4")
    assert one == four
    rows = one["predictions"]["react.json"]
    assert [r["id"] for r in rows] == [s.id for s in samples]  # the requests' order, not the finishing order
    assert all(r["harness"]["error"] is None for name in one["predictions"] for r in one["predictions"][name])


def test_two_shards_merged_are_the_unsharded_report(runs):
    root, _, samples = runs
    shard_one = json.loads((root / "s1" / "run.json").read_text())
    assert shard_one["shard"] == "1/2" and shard_one["requests"] == [s.id for s in samples]
    assert len((root / "s1" / "predictions" / "global.json").read_text().splitlines()) == 5  # its part only
    assert folder_contents(root / "merged") == folder_contents(root / "n1")


def test_the_tables_hold_intervals_beside_each_metric(runs):
    root, _, samples = runs
    overview = (root / "n1" / "overview.md").read_text()
    assert "bootstrap interval" in overview and f"| global | {len(samples)}/{len(samples)} | " in overview
    summary = json.loads((root / "n1" / "summary.json").read_text())["agents"]["global"]
    low, high = summary["intervals"]["edge_f1"]
    assert low <= summary["edge_f1"] <= high


def test_merge_refuses_what_is_not_one_finished_comparison(runs, tmp_path):
    root, _, _ = runs
    with pytest.raises(HuggingGPTError, match="missing 1/2"):
        merge([root / "s2"], tmp_path / "m")
    with pytest.raises(HuggingGPTError, match="not a shard"):
        merge([root / "n1", root / "s2"], tmp_path / "m")
    unfinished = tmp_path / "s1"
    (unfinished / "predictions").mkdir(parents=True)
    (unfinished / "run.json").write_text((root / "s1" / "run.json").read_text())
    for path in (root / "s1" / "predictions").glob("*.json"):
        lines = path.read_text().splitlines()
        (unfinished / "predictions" / path.name).write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(HuggingGPTError, match="lacks the predictions of global for 1 of its 5 requests"):
        merge([unfinished, root / "s2"], tmp_path / "m")


def test_an_interrupted_run_resumes_without_losing_or_repeating_a_request(taskbench, tmp_path):
    samples = chosen(taskbench)
    path = tmp_path / "out" / "predictions" / "global.json"
    with OpenAIServer(plans=gold_plans(taskbench, samples), latency=0.05) as server:
        comparison = Comparison(taskbench, stand_in_llm(server), tmp_path / "out", agents=["global"], concurrency=3)

        async def interrupted():
            task = asyncio.create_task(comparison.arun(samples))
            while not path.is_file() or len(path.read_text().splitlines()) < 4:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(interrupted())
        first = [json.loads(line)["id"] for line in path.read_text().splitlines()]
        with path.open("a") as fh:
            fh.write('{"id": "half a line')  # killed while writing a row
        planned_before = len(server.requests)
        comparison.run(samples)
    again = [body["messages"][-1]["content"] for body in server.requests[planned_before:]]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["id"] for r in rows] == [s.id for s in samples]  # each request once, in order
    done_first = [s for s in samples if s.id in first]
    assert 4 <= len(done_first) < len(samples)
    ran_again = {s.id for s in samples if any(s.request in text for text in again)}
    assert ran_again == {s.id for s in samples} - set(first)  # finished ones did not run again, the rest did


def test_failures_are_recorded_with_their_reason(taskbench, tmp_path):
    import threading

    samples = chosen(taskbench, 3)
    broken, stuck = samples[0].request, samples[1].request
    released = threading.Event()

    def errors(body):
        asked = json.dumps(body["messages"])
        if json.dumps(broken)[1:-1] in asked:
            return 500, {}
        if json.dumps(stuck)[1:-1] in asked:
            released.wait(60)  # no answer until the test is over
        return None

    with OpenAIServer(plans=gold_plans(taskbench, samples), errors=errors) as server:
        llm = stand_in_llm(server, max_retries=0)
        try:
            report = Comparison(taskbench, llm, tmp_path / "o", agents=["global", "react"], concurrency=3,
                                timeout=10).run(samples)
        finally:
            released.set()
    for name in ("global", "react"):
        errors_by_id = {r["id"]: r["harness"]["error"] for r in report[name].rows}
        assert "500" in errors_by_id[samples[0].id]
        assert errors_by_id[samples[1].id] == "timeout: no result within 10 s"
        assert errors_by_id[samples[2].id] is None
        assert report[name].failures == 2 and len(report[name].rows) == 3


@pytest.mark.parametrize("agent", ["global", "create-agent"])  # ours raise; a peer that catches errors re-raises a 429
def test_a_429_runs_again_after_its_retry_after(taskbench, tmp_path, agent):
    samples = chosen(taskbench, 2)
    refused = []

    def errors(body):
        if len(refused) < 3:
            refused.append(body)
            return 429, {"Retry-After": "0"}
        return None

    with OpenAIServer(plans=gold_plans(taskbench, samples), errors=errors) as server:
        report = Comparison(taskbench, stand_in_llm(server, max_retries=0), tmp_path / "o", agents=[agent],
                            concurrency=1).run(samples)
    rows = report[agent].rows
    assert [r["harness"]["error"] for r in rows] == [None, None]
    assert rows[0]["harness"]["rate_limited"] == 3 and "rate_limited" not in rows[1]["harness"]


def test_retry_after_reads_the_header_from_the_error_chain():
    def refused(headers):
        response = httpx.Response(429, headers=headers, request=httpx.Request("POST", "http://x/v1/chat"))
        return openai.RateLimitError("slow down", response=response, body=None)

    wrapped = RuntimeError("the LLM call failed")
    wrapped.__cause__ = refused({"Retry-After": "2.5"})
    assert retry_after(wrapped) == 2.5
    assert retry_after(refused({})) == 1.0
    assert retry_after(refused({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # a date gone by
    assert retry_after(ValueError("no")) is None


class CountingAgent:
    """Plans nothing, and counts how many of its requests are in flight at once."""

    def __init__(self):
        self.now = self.most = 0

    async def aplan(self, request):
        self.now += 1
        self.most = max(self.most, self.now)
        await asyncio.sleep(0.01)
        self.now -= 1
        return []


@pytest.mark.parametrize("concurrency", [1, 3])
def test_requests_in_flight_are_bounded_by_the_concurrency(taskbench, tmp_path, concurrency):
    agent = CountingAgent()
    Comparison(taskbench, None, tmp_path / "o", agents=["global"], concurrency=concurrency,
               factory=lambda *a, **k: agent).run(chosen(taskbench))
    assert agent.most == concurrency


def test_the_embedded_controller_runs_requests_one_at_a_time_and_the_tables_say_so(taskbench, tmp_path):
    from hugginggpt.llm.llamacpp import LlamaCppChatModel

    embedded = LlamaCppChatModel.model_construct(model_path="model.gguf")
    assert answers_one_call_at_a_time(embedded) and not answers_one_call_at_a_time(object())
    agent = CountingAgent()
    comparison = Comparison(taskbench, embedded, tmp_path / "o", agents=["global"], concurrency=8,
                            factory=lambda *a, **k: agent)
    comparison.run(chosen(taskbench))
    assert agent.most == 1
    assert "one call at a time" in (tmp_path / "o" / "metrics.md").read_text()
    assert "--concurrency 8" in json.loads((tmp_path / "o" / "summary.json").read_text())["notes"][0]


def test_a_request_s_seconds_are_its_own_not_its_wait(taskbench, tmp_path, monkeypatch):
    import hugginggpt.eval.compare as compare

    clock = [0.0]
    monkeypatch.setattr(compare.time, "perf_counter", lambda: clock[0])

    class OneSecond:
        async def aplan(self, request):
            clock[0] += 1.0  # each request takes one second of the (fake) clock
            return []

    report = Comparison(taskbench, None, tmp_path / "o", agents=["global"], concurrency=1,
                        factory=lambda *a, **k: OneSecond()).run(chosen(taskbench, 4))
    assert [r["harness"]["seconds"] for r in report["global"].rows] == [1.0] * 4  # not 1, 2, 3, 4: queued


def test_shard_parts_are_fixed_and_cover_the_requests():
    items = list(range(10))
    parts = [Shard.parse(f"{i}/3").select(items) for i in (1, 2, 3)]
    assert parts == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert str(Shard.parse(" 2 / 3 ")) == "2/3"
    for bad in ("0/3", "4/3", "1", "a/b", ""):
        with pytest.raises(HuggingGPTError, match="--shard must be i/n"):
            Shard.parse(bad)


def test_the_comparison_checks_its_settings(dataset, tmp_path):
    with pytest.raises(HuggingGPTError, match="--concurrency"):
        Comparison(dataset, None, tmp_path, concurrency=0)
    with pytest.raises(HuggingGPTError, match="--timeout"):
        Comparison(dataset, None, tmp_path, timeout=0)
