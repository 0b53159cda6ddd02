"""The Dockerfile builds an image that runs `hugginggpt serve`, and `hugginggpt mcp` with `--entrypoint
hugginggpt` (skipped, saying why, without docker); what it installs and the README's docker commands
are checked without docker."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from tests.server.live import free_port
from tests.shared import gguf_or_skip

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
TAG = "hugginggpt-test:latest"


# ------------------------------------------------------------------ without docker


def test_the_image_installs_the_extras_of_the_commands_it_runs():
    (spec,) = re.findall(r'pip install [^\n]*"\.\[([a-z,]+)\]"', DOCKERFILE)
    installed = set(spec.split(","))
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert installed <= set(extras)
    # serve (server), mcp (mcp), the embedded and hosted controllers (llm), task models on the CPU (local)
    assert {"local", "llm", "server", "mcp"} <= installed
    assert 'ENTRYPOINT ["hugginggpt", "serve", "--host", "0.0.0.0", "--port", "8000"]' in DOCKERFILE


#: docker run's options that take a value (the README's commands use no others).
WITH_VALUE = {"-p", "-e", "-v", "--name", "--entrypoint"}


def docker_run(line: str) -> tuple[dict[str, list[str]], str | None, list[str]]:
    """A ``docker run`` command line as (options, image, the arguments after the image)."""
    words, options, i = shlex.split(line)[2:], {}, 0
    while i < len(words) and words[i].startswith("-"):
        value = words[i + 1] if words[i] in WITH_VALUE else ""
        options.setdefault(words[i], []).append(value)
        i += 2 if words[i] in WITH_VALUE else 1
    return options, (words[i] if i < len(words) else None), words[i + 1:]


def test_the_readmes_docker_commands_run_commands_that_exist():
    from hugginggpt.cli.main import build_parser

    commands = [docker_run(line) for line in re.findall(r"`(docker run [^`]+)`", (ROOT / "README.md").read_text())]
    commands = [(options, after) for options, image, after in commands if image == "hugginggpt"]
    assert len(commands) >= 2
    for options, after in commands:
        assert any(volume.endswith(":/data") for volume in options["-v"])  # models and runs in the volume
        if "--entrypoint" not in options:  # after the image: serve's arguments
            assert build_parser().parse_args(["serve", *after]).command == "serve"
            continue
        assert options["--entrypoint"] == ["hugginggpt"]
        args = build_parser().parse_args(after)
        assert args.command == "mcp" and "-i" in options  # stdio: the client talks to docker's stdin
        for folder in args.allow:  # a path inside the container, mounted from the host
            assert any(volume.split(":")[1] == folder for volume in options["-v"])


# ------------------------------------------------------------------ with docker


@pytest.fixture(scope="module")
def docker() -> str:
    executable = shutil.which("docker")
    if executable is None:
        pytest.skip("docker is not installed: the Dockerfile's build-and-serve test needs it")
    info = subprocess.run([executable, "info"], capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        pytest.skip(f"the docker daemon is not reachable: {(info.stderr or info.stdout).strip().splitlines()[-1]}")
    return executable


@pytest.fixture(scope="module")
def image(docker) -> str:
    build = subprocess.run([docker, "build", "-t", TAG, str(ROOT)], capture_output=True, text=True, timeout=3600)
    if build.returncode != 0:
        pytest.fail(f"docker build failed: {build.stderr[-3000:]}")
    return TAG


@pytest.mark.slow
def test_dockerfile_runs_hugginggpt_serve(docker, image):
    gguf = gguf_or_skip("smollm2-135m")
    port = free_port()
    name = f"hugginggpt-test-{port}"
    subprocess.run([docker, "run", "-d", "--rm", "--name", name, "-p", f"127.0.0.1:{port}:8000",
                    "-e", "HUGGINGGPT_API_KEY=k", "-v", f"{gguf}:/models/model.gguf:ro", image,
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


@pytest.mark.slow
async def test_the_image_runs_hugginggpt_mcp_over_stdio(docker, image, tmp_path):
    """As the README shows it: `docker run -i --entrypoint hugginggpt IMAGE mcp --allow /pictures`, driven
    by the MCP SDK's client; every task tool and the agent are listed, and a file outside the allowed
    folder is refused."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from hugginggpt.mcp import AGENT_TOOL
    from hugginggpt.tools import task_table

    (tmp_path / "pictures").mkdir()
    params = StdioServerParameters(command=docker, args=["run", "-i", "--rm", "-v", f"{tmp_path / 'pictures'}:/pictures:ro",
                                                         "--entrypoint", "hugginggpt", image, "mcp", "--allow", "/pictures"])
    with anyio.fail_after(300):
        async with stdio_client(params, errlog=sys.stderr) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = {tool.name for tool in (await session.list_tools()).tools}
            refused = await session.call_tool("image-to-text", {"image": "/etc/passwd"})
    assert listed == set(task_table()) | {AGENT_TOOL}
    assert refused.isError and "path escapes the allowed folders: /etc/passwd" in refused.content[0].text
