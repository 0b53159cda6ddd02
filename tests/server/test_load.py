"""100 concurrent requests over HTTP to one real server (scripted controller, local tools): every one
is answered, no run sees another's files, trace or references, and memory stays bounded."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import png
from tests.server.live import rss_mib

pytestmark = pytest.mark.slow

N = 100


async def one_run(client: httpx.AsyncClient, i: int, image: Path) -> dict:
    response = await client.post("/runs", data={"input": f"Describe the picture of request {i}, read it aloud"},
                                 files={"files": (image.name, image.read_bytes(), "image/png")})
    assert response.status_code == 201, response.text
    run_id = response.json()["id"]
    events = []
    async with client.stream("GET", f"/runs/{run_id}/events") as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    run = (await client.get(f"/runs/{run_id}")).json()
    return {"i": i, "id": run_id, "events": events, "run": run}


async def one_completion(client: httpx.AsyncClient, i: int) -> dict:
    response = await client.post("/hugginggpt", json={"messages": [{"role": "user", "content": f"hello {i}"}]})
    assert response.status_code == 200, response.text
    return response.json()


async def wave(url: str, images: list[Path]) -> tuple[list[dict], list[dict]]:
    limits = httpx.Limits(max_connections=2 * N, max_keepalive_connections=2 * N)
    # generous: the point is that every request is answered, however loaded the machine; latency is
    # benchmarks/server_load.py's business
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
        runs = asyncio.gather(*(one_run(client, i, image) for i, image in enumerate(images)))
        chats = asyncio.gather(*(one_completion(client, i) for i in range(N)))
        return await runs, await chats


def check_no_leak(result: dict, runs_dir: Path, url: str) -> None:
    i, run, folder = result["i"], result["run"], runs_dir / result["id"]
    files = f"{url}/runs/{result['id']}/files/"  # a run's answer names its files by their URLs (issue 34)
    mine = f"img{i:03d}"
    assert result["events"][-1] == {"event": "end", "status": "done", "error": None}
    assert run["status"] == "done" and f"a photo of a {mine}" in run["output"]
    text = json.dumps(result["events"]) + json.dumps(run)
    others = set(re.findall(r"img\d{3}", text)) - {mine}
    assert not others, f"run {i} mentions other runs' files: {others}"
    trace = (folder / run["trace"]).read_text()
    assert set(re.findall(r"img\d{3}", trace)) == {mine}
    audio = run["results"]["1"]["result"]["audio"]
    assert audio.startswith(files) and (folder / audio[len(files):]).is_file(), "outputs stay in the run's own folder"
    assert {p.name for p in (folder / "uploads").iterdir()} == {f"{mine}.png"}
    assert run["plan"][0]["args"]["image"] == f"{files}uploads/{mine}.png"
    assert str(runs_dir) not in text
    other_ids = {p.name for p in runs_dir.iterdir()} - {result["id"]}
    assert not any(other in text for other in other_ids)


@pytest.mark.timeout(1200)
def test_100_concurrent_requests_are_all_answered_without_leaks_in_bounded_memory(make_server, tmp_path):
    server = make_server(max_active=8, max_queued=4 * N, keep_runs_s=3600)
    images = [png(tmp_path / "in" / f"img{i:03d}.png", (i, 255 - i, 7)) for i in range(N)]

    runs, chats = asyncio.run(wave(server.url, images))
    assert len(runs) == N and len(chats) == N
    for result in runs:
        check_no_leak(result, server.settings.runs_dir, server.url)
    assert sorted(chats, key=lambda c: c["message"]) == sorted(({"message": "Answer: nothing to do"},) * N,
                                                              key=lambda c: c["message"])
    assert len({r["id"] for r in runs}) == N
    registry = server.app.state.registry
    assert registry.unfinished() == 0

    # memory: a second wave of the same size must not grow the process much further
    after_first = rss_mib()
    if after_first != after_first:  # NaN
        pytest.skip("no /proc/self/status to read memory from")
    registry.reap(now=float("inf"))  # retention time passed: everything finished goes, with its folder
    assert registry.runs == {} and list(server.settings.runs_dir.iterdir()) == []
    runs, _ = asyncio.run(wave(server.url, images))
    assert all(r["run"]["status"] == "done" for r in runs)
    registry.reap(now=float("inf"))
    growth = rss_mib() - after_first
    assert growth < 50, f"memory grew by {growth:.0f} MiB over a second wave of {2 * N} requests"
