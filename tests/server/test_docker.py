"""The Dockerfile builds an image that runs `hugginggpt serve` (skipped, saying why, without docker)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.server.live import free_port
from tests.shared import gguf_or_skip

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def docker() -> str:
    executable = shutil.which("docker")
    if executable is None:
        pytest.skip("docker is not installed: the Dockerfile's build-and-serve test needs it")
    info = subprocess.run([executable, "info"], capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        pytest.skip(f"the docker daemon is not reachable: {(info.stderr or info.stdout).strip().splitlines()[-1]}")
    return executable


def test_dockerfile_runs_hugginggpt_serve(docker, tmp_path):
    gguf = gguf_or_skip("smollm2-135m")
    tag = "hugginggpt-test:latest"
    build = subprocess.run([docker, "build", "-t", tag, str(ROOT)], capture_output=True, text=True, timeout=3600)
    if build.returncode != 0:
        pytest.fail(f"docker build failed: {build.stderr[-3000:]}")
    port = free_port()
    name = f"hugginggpt-test-{port}"
    subprocess.run([docker, "run", "-d", "--rm", "--name", name, "-p", f"127.0.0.1:{port}:8000",
                    "-e", "HUGGINGGPT_API_KEY=k", "-v", f"{gguf}:/models/model.gguf:ro", tag,
                    "--llm", "gguf:/models/model.gguf", "--execution", "remote"], check=True, timeout=120)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                if health.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the container did not answer /health in 300 s"
            time.sleep(1)
        assert health.json()["auth"] is True
        assert httpx.get(f"http://127.0.0.1:{port}/v1/models").status_code == 401
        models = httpx.get(f"http://127.0.0.1:{port}/v1/models", headers={"Authorization": "Bearer k"}).json()
        assert "global" in {m["id"] for m in models["data"]}
        assert "<html" in httpx.get(f"http://127.0.0.1:{port}/").text
    finally:
        subprocess.run([docker, "rm", "-f", name], capture_output=True, timeout=120)
