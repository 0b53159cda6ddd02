"""Attacks on files and the network through the public tools: what an LLM (or a request) writes as a
tool argument must never read outside the run's workspace and the user's allowed inputs, nor make us
fetch anything but bounded http(s).

Every attack is one row of ``ATTACKS`` with the error it must raise; ``test_every_attack_was_run``
checks that the table is non-empty and that each row ran. Positive controls (a legitimate file, a
legitimate URL) prove the attacks fail for the reason they claim, not because the tool is broken.

The test server is on 127.0.0.1, which the default policy refuses: the run's workspace trusts exactly
that server's port, as a user would opt in, and every other local address stays refused. A second
server (the "internal service") holds a valid image that only the private-address guard keeps out.
"""

from __future__ import annotations

import io
import ipaddress
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest
from PIL import Image

from hugginggpt.errors import InvalidArgumentsError, RemoteInferenceError, ResourceError
from hugginggpt.tools import build_tools, get_task
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.resources import Workspace, public_only
from hugginggpt.tools.results import envelope
from tests.http_servers import RouteHandler, serve

PRIVATE = "refusing to download from a private network address"
MAX_BYTES = 20_000
TIMEOUT_S = 2.5  # one deadline for a whole download, redirects included: room for six hops on a loaded machine
UUID_NAME = re.compile(r"[0-9a-f]{32}\.[a-z0-9]+")


def _png(colour=(200, 10, 10)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (6, 4), colour).save(buf, format="PNG")
    return buf.getvalue()


PNG = _png()


# ------------------------------------------------------------------------------ the local server


class Handler(RouteHandler):
    """Each route is one hostile (or, for controls, friendly) server behaviour."""

    hits: ClassVar[list[int]] = []  # the port of every request, so a test can prove a server was never reached

    def record(self) -> None:
        self.hits.append(self.server.server_address[1])

    def send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if "Content-Length" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _redirect(location: str) -> Callable[[Handler], None]:
    return lambda h: h.send(302, headers={"Location": location})


def _chunked_flood(h: Handler) -> None:
    """No Content-Length, then more bytes than any limit: the size check must hold while streaming."""
    h.send_response(200)
    h.send_header("Content-Type", "image/png")
    h.send_header("Connection", "close")
    h.end_headers()
    h.wfile.write(PNG)
    for _ in range(64):
        h.wfile.write(b"\0" * 16_384)


def _trickle(h: Handler) -> None:
    """One byte every 0.1 s: each read is fast, the whole transfer is not."""
    h.send_response(200)
    h.send_header("Content-Type", "image/png")
    h.send_header("Content-Length", str(len(PNG)))
    h.end_headers()
    for byte in PNG[:40]:
        h.wfile.write(bytes([byte]))
        h.wfile.flush()
        time.sleep(0.1)


ROUTES: dict[str, Callable[[Handler], None]] = {
    "/cat.png": lambda h: h.send(200, PNG, {"Content-Type": "image/png"}),
    "/named.sh": lambda h: h.send(200, PNG, {"Content-Type": "application/octet-stream",
                                             "Content-Disposition": 'attachment; filename="../../evil.sh"'}),
    "/to-cat": _redirect("/cat.png"),
    "/to-file": _redirect("file:///etc/passwd"),
    "/to-ftp": _redirect("ftp://127.0.0.1/secret"),
    "/to-gopher": _redirect("gopher://127.0.0.1:70/_x"),
    "/loop": _redirect("/loop"),
    "/huge-declared": lambda h: h.send(200, PNG, {"Content-Type": "image/png", "Content-Length": str(10**12)}),
    "/flood": _chunked_flood,
    "/trickle": _trickle,
    "/html": lambda h: h.send(200, b"<html>not an image</html>", {"Content-Type": "image/png"}),
    "/gone": lambda h: h.send(500, b"boom"),
    "/to-metadata": _redirect("http://169.254.169.254/latest/meta-data/"),
    # an open redirect to another port on this host (the internal service)
    "/goto": lambda h: h.send(302, headers={"Location": f"http://localhost:{h.path.rsplit('=', 1)[1]}/cat.png"}),
}


Handler.routes = ROUTES


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    yield from serve(Handler)


@pytest.fixture(scope="module")
def internal_url() -> Iterator[str]:
    """A local service the LLM must not reach; it serves a valid image, so only the guard can stop it."""
    yield from serve(Handler)


def trusting_port(port: int):
    """The policy of a user who opted in to one local server: its port on loopback, else public only."""
    def policy(address: ipaddress.IPv4Address | ipaddress.IPv6Address, at: int) -> str | None:
        return None if at == port and address.is_loopback else public_only(address, at)
    return policy


# ------------------------------------------------------------------------- the deterministic tools


class ReadingExecutor(Executor):
    """Reads the image it is given (so a leaked path would really be read) and paints new ones."""

    name = "reading"

    def __init__(self) -> None:
        self.calls: list[TaskCall] = []

    def can_run(self, task: str, model: str | None) -> bool:
        return task in ("image-classification", "text-to-image")

    def run(self, call: TaskCall) -> dict[str, Any]:
        self.calls.append(call)
        if call.task.name == "text-to-image":
            path = call.workspace.new_path("image")
            Image.new("RGB", (4, 4), (0, 0, 255)).save(path)
            return envelope(image=path, task=call.task.name)
        with Image.open(call.args["image"]) as img:
            return envelope(text=f"{img.width}x{img.height}", task=call.task.name)


@dataclass
class Env:
    """One run's folders: the workspace, an allowed input folder, and secrets outside both."""

    ws: Workspace
    allowed: Path
    outside: Path
    url: str
    internal_port: int
    executor: ReadingExecutor

    def tool(self, task: str = "image-classification"):
        return build_tools([task], executor=self.executor, workspace=self.ws)[0]


@pytest.fixture
def env(tmp_path, server_url, internal_url) -> Env:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.png").write_bytes(PNG)  # a valid image: only confinement can stop the read
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "photo.png").write_bytes(PNG)
    ws = Workspace(tmp_path / "run", inputs=[allowed], max_download_bytes=MAX_BYTES, download_timeout=TIMEOUT_S,
                   address_policy=trusting_port(urlsplit(server_url).port))
    root = ws.root
    (root / "inside.png").write_bytes(PNG)
    os.symlink(outside / "secret.png", root / "link.png")
    os.symlink(outside, root / "dirlink")
    os.symlink(outside / "secret.png", allowed / "link-in-input.png")
    os.symlink(root / "loop-a", root / "loop-b")
    os.symlink(root / "loop-b", root / "loop-a")
    os.mkfifo(root / "pipe.png")
    (root / "folder.png").mkdir()
    return Env(ws=ws, allowed=allowed, outside=outside, url=server_url, internal_port=urlsplit(internal_url).port,
               executor=ReadingExecutor())


# ------------------------------------------------------------------------------------ the table


@dataclass(frozen=True)
class Attack:
    """One hostile argument: ``value(env)`` is what the LLM writes; the tool must raise ``error`` matching ``match``."""

    name: str
    value: Callable[[Env], Any]
    error: type[Exception]
    match: str
    task: str = "image-classification"
    arg: str = "image"


ATTACKS: list[Attack] = [
    # --- local paths
    Attack("dot-dot traversal", lambda e: "../outside/secret.png", ResourceError, "escapes the allowed folders"),
    Attack("deep traversal", lambda e: "../" * 40 + "etc/passwd", ResourceError, "escapes the allowed folders"),
    Attack("traversal through an allowed input", lambda e: f"{e.allowed}/../outside/secret.png", ResourceError,
           "escapes the allowed folders"),
    Attack("absolute path outside", lambda e: str(e.outside / "secret.png"), ResourceError,
           "escapes the allowed folders"),
    Attack("/etc/passwd", lambda e: "/etc/passwd", ResourceError, "escapes the allowed folders"),
    Attack("home folder", lambda e: "~/.bashrc", ResourceError, "escapes the allowed folders"),
    Attack("symlink to a file outside", lambda e: "link.png", ResourceError, "escapes the allowed folders"),
    Attack("symlinked folder outside", lambda e: "dirlink/secret.png", ResourceError, "escapes the allowed folders"),
    Attack("symlink planted in an allowed input", lambda e: str(e.allowed / "link-in-input.png"), ResourceError,
           "escapes the allowed folders"),
    Attack("symlink loop", lambda e: "loop-a", ResourceError, "cannot resolve path|file not found"),
    Attack("/dev/zero", lambda e: "/dev/zero", ResourceError, "escapes the allowed folders"),
    Attack("/dev/stdin", lambda e: "/dev/stdin", ResourceError, "escapes the allowed folders"),
    Attack("/proc/self/environ", lambda e: "/proc/self/environ", ResourceError, "escapes the allowed folders"),
    Attack("fifo in the workspace", lambda e: "pipe.png", ResourceError, "not a regular file"),
    Attack("folder named like a file", lambda e: "folder.png", ResourceError, "not a regular file"),
    Attack("NUL byte in a path", lambda e: "inside.png\x00../../etc/passwd", ResourceError, "NUL"),
    Attack("very long file name", lambda e: "a" * 5000 + ".png", ResourceError, "cannot read"),
    Attack("very deep path", lambda e: "d/" * 3000 + "x.png", ResourceError, "cannot read"),
    Attack("fullwidth dots", lambda e: "\uff0e\uff0e/outside/secret.png", ResourceError, "file not found"),
    Attack("two-dot leader", lambda e: "\u2025/outside/secret.png", ResourceError, "file not found"),
    Attack("percent-encoded dots", lambda e: "%2e%2e/outside/secret.png", ResourceError, "file not found"),
    Attack("backslash traversal", lambda e: "..\\outside\\secret.png", ResourceError, "file not found"),
    Attack("leading spaces", lambda e: "   ../outside/secret.png", ResourceError, "escapes the allowed folders"),
    Attack("not an image", lambda e: str(e.ws.root / "trace-like.png"), ResourceError, "not an image|not found"),
    # --- references the scheduler should have substituted
    Attack("unresolved <resource>-N", lambda e: "<resource>-1", ResourceError, "unresolved reference"),
    Attack("unresolved <resource-N>", lambda e: "<resource-3>", ResourceError, "unresolved reference"),
    Attack("reference inside a path", lambda e: "<resource>-1/../../etc/passwd", ResourceError,
           "unresolved reference"),
    # --- schemes
    Attack("file:// URL", lambda e: "file:///etc/passwd", ResourceError, "unsupported URL scheme"),
    Attack("FILE:// upper case", lambda e: "FILE:///etc/passwd", ResourceError, "unsupported URL scheme"),
    Attack("ftp:// URL", lambda e: "ftp://127.0.0.1/x.png", ResourceError, "unsupported URL scheme"),
    Attack("data: URL", lambda e: "data:image/png;base64,iVBORw0KGgo=", ResourceError, "unsupported URL scheme"),
    Attack("jar:file URL", lambda e: "jar:file:///x.jar!/a.png", ResourceError, "unsupported URL scheme"),
    Attack("javascript: URL", lambda e: "javascript:alert(1)", ResourceError, "unsupported URL scheme"),
    # --- http(s) servers that misbehave
    Attack("redirect to file://", lambda e: e.url + "/to-file", ResourceError, "redirect to a non-http"),
    Attack("redirect to ftp://", lambda e: e.url + "/to-ftp", ResourceError, "redirect to a non-http"),
    Attack("redirect to gopher://", lambda e: e.url + "/to-gopher", ResourceError, "redirect to a non-http"),
    Attack("redirect loop", lambda e: e.url + "/loop", ResourceError, "too many redirects"),
    Attack("huge Content-Length", lambda e: e.url + "/huge-declared", ResourceError, "exceeds"),
    Attack("endless body without length", lambda e: e.url + "/flood", ResourceError, "exceeds"),
    Attack("slow trickle", lambda e: e.url + "/trickle", ResourceError, "timed out"),
    Attack("HTML served as PNG", lambda e: e.url + "/html", ResourceError, "not an image"),
    Attack("server error", lambda e: e.url + "/gone", ResourceError, "HTTP 500"),
    # --- private network addresses (SSRF): refused before any connection is made
    Attack("closed local port", lambda e: "http://127.0.0.1:1/x.png", ResourceError, PRIVATE),
    Attack("local service on loopback", lambda e: f"http://127.0.0.1:{e.internal_port}/cat.png", ResourceError,
           PRIVATE),
    Attack("localhost", lambda e: f"http://localhost:{e.internal_port}/cat.png", ResourceError, PRIVATE),
    Attack("IPv6 loopback", lambda e: f"http://[::1]:{e.internal_port}/cat.png", ResourceError, PRIVATE),
    Attack("IPv4-mapped loopback", lambda e: f"http://[::ffff:127.0.0.1]:{e.internal_port}/cat.png",
           ResourceError, PRIVATE),
    Attack("decimal IP", lambda e: f"http://2130706433:{e.internal_port}/cat.png", ResourceError, PRIVATE),
    Attack("hex IP", lambda e: f"http://0x7f.1:{e.internal_port}/cat.png", ResourceError, PRIVATE),
    Attack("short IP", lambda e: f"http://127.1:{e.internal_port}/cat.png", ResourceError, PRIVATE),
    Attack("octal IP", lambda e: f"http://0177.0.0.1:{e.internal_port}/cat.png", ResourceError,
           PRIVATE + "|invalid URL"),
    Attack("unspecified address", lambda e: f"http://0.0.0.0:{e.internal_port}/cat.png", ResourceError, PRIVATE),
    Attack("cloud metadata", lambda e: "http://169.254.169.254/latest/meta-data/iam/", ResourceError, PRIVATE),
    Attack("cloud metadata over IPv6", lambda e: "http://[fd00:ec2::254]/latest/meta-data/", ResourceError,
           PRIVATE),
    Attack("LAN 10.x", lambda e: "http://10.0.0.1/admin.png", ResourceError, PRIVATE),
    Attack("LAN 192.168.x", lambda e: "https://192.168.1.1/router.png", ResourceError, PRIVATE),
    Attack("LAN 172.16.x", lambda e: "http://172.16.5.4/x.png", ResourceError, PRIVATE),
    Attack("carrier-grade NAT", lambda e: "http://100.100.100.200/latest/meta-data/", ResourceError, PRIVATE),
    Attack("redirect to a local service", lambda e: f"{e.url}/goto?port={e.internal_port}", ResourceError,
           PRIVATE),
    Attack("redirect to cloud metadata", lambda e: e.url + "/to-metadata", ResourceError, PRIVATE),
    # --- arguments the schema must refuse before anything is touched
    Attack("output path smuggled as an argument", lambda e: {"text": "a cat", "output_path": "/tmp/evil.png"},
           InvalidArgumentsError, "output_path: unknown argument", task="text-to-image", arg=""),
    Attack("a path given as a list", lambda e: ["/etc/passwd"], InvalidArgumentsError, "image"),
    Attack("a path given as an object", lambda e: {"path": "/etc/passwd"}, InvalidArgumentsError, "image"),
]

RAN: set[str] = set()


def internal_port_hits(env: Env) -> int:
    return Handler.hits.count(env.internal_port)


def run_attack(attack: Attack, env: Env) -> None:
    """Invoke the tool with the hostile argument; the typed error must name the task, nothing is read."""
    if attack.name == "not an image":
        (env.ws.root / "trace-like.png").write_text('{"not": "an image"}')
    reached_before = internal_port_hits(env)
    value = attack.value(env)
    args = value if not attack.arg else {attack.arg: value}
    with pytest.raises(attack.error, match=attack.match) as caught:
        env.tool(attack.task).invoke(args)
    assert caught.value.task == attack.task
    assert env.executor.calls == [], f"{attack.name}: the executor ran on a hostile input"
    if attack.arg == "image" and isinstance(value, str):  # the gate itself, as executors and agents call it
        with pytest.raises(ResourceError, match=attack.match):
            env.ws.resolve(value, "image")
    assert internal_port_hits(env) == reached_before, f"{attack.name}: the internal service was reached"
    leftovers = [p.name for p in (env.ws.root / "inputs").glob("*")] if (env.ws.root / "inputs").exists() else []
    assert leftovers == [], f"{attack.name}: a rejected download left files behind: {leftovers}"
    RAN.add(attack.name)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_is_refused(attack: Attack, env: Env) -> None:
    run_attack(attack, env)


# ---------------------------------------------------------------------------- positive controls


def test_control_a_file_inside_the_workspace_is_read(env: Env) -> None:
    assert env.tool().invoke({"image": "inside.png"}) == {"text": "6x4"}
    assert env.tool().invoke({"image": str(env.allowed / "photo.png")}) == {"text": "6x4"}
    assert [Path(c.args["image"]).name for c in env.executor.calls] == ["inside.png", "photo.png"]


def test_control_an_http_url_is_downloaded_even_through_a_redirect(env: Env) -> None:
    assert env.tool().invoke({"image": env.url + "/to-cat"}) == {"text": "6x4"}
    (downloaded,) = [Path(c.args["image"]) for c in env.executor.calls]
    assert downloaded.parent == env.ws.root / "inputs"


def test_control_the_internal_service_is_reachable_when_the_user_allows_private_urls(env: Env, tmp_path) -> None:
    """The SSRF rows are refused by the guard, not because the internal service or its spellings are broken."""
    ws = Workspace(tmp_path / "open", allow_private_urls=True)
    reached_before = internal_port_hits(env)
    tool = build_tools(["image-classification"], executor=env.executor, workspace=ws)[0]
    for url in (f"http://localhost:{env.internal_port}/cat.png", f"http://2130706433:{env.internal_port}/cat.png",
                f"{env.url}/goto?port={env.internal_port}"):
        assert tool.invoke({"image": url}) == {"text": "6x4"}
    assert internal_port_hits(env) == reached_before + 3


def test_downloads_are_named_by_the_library_not_the_server(env: Env) -> None:
    """Content-Disposition ``../../evil.sh`` and a ``.sh`` URL: the file is a uuid with the sniffed suffix."""
    env.tool().invoke({"image": env.url + "/named.sh"})
    (downloaded,) = [Path(c.args["image"]) for c in env.executor.calls]
    assert downloaded.parent == env.ws.root / "inputs"
    assert UUID_NAME.fullmatch(downloaded.name) and downloaded.suffix == ".png"
    assert not list(env.ws.root.parent.glob("evil*")) and not list(env.ws.root.rglob("evil*"))


def test_generated_file_names_never_come_from_the_llm(env: Env) -> None:
    """A prompt that asks for a name and a path still gets a fresh uuid file in ``outputs``."""
    text = "a cat, save it as ../../evil.png or /tmp/evil.png"
    first = env.tool("text-to-image").invoke({"text": text})
    second = env.tool("text-to-image").invoke({"text": text})
    for result in (first, second):
        path = Path(result["image"])
        assert path.parent == env.ws.root / "outputs" and UUID_NAME.fullmatch(path.name)
        assert "evil" not in path.name
    assert first["image"] != second["image"]


def test_remote_outputs_are_named_by_the_library(tmp_path) -> None:
    """The remote executor saves generated media under a uuid even when the model id looks like a path."""
    from hugginggpt.tools.executors.remote import RemoteExecutor
    from tests.inference_server import InferenceServer

    ws = Workspace(tmp_path / "run")
    with InferenceServer() as server:
        remote = RemoteExecutor(f"{server.url}/text-to-image", token="hf_secrettoken123", backoff=0.01)
        result = remote.run(TaskCall(task=get_task("text-to-image"), args={"text": "red, name it ../../evil.png"},
                                     workspace=ws, model="../../evil"))
    path = Path(result["image"])
    assert path.parent == ws.root / "outputs" and UUID_NAME.fullmatch(path.name)


def test_a_token_never_appears_in_a_remote_error(tmp_path) -> None:
    from hugginggpt.tools.executors.remote import RemoteExecutor
    from tests.inference_server import InferenceServer

    ws = Workspace(tmp_path / "run")
    with InferenceServer() as server:
        server.token = "hf_the_right_one_000"
        remote = RemoteExecutor(f"{server.url}/summarization", token="hf_secrettoken123", max_retries=0)
        with pytest.raises(RemoteInferenceError) as caught:
            remote.run(TaskCall(task=get_task("summarization"), args={"text": "hello"}, workspace=ws))
    assert caught.value.status_code == 401
    assert "hf_secrettoken123" not in str(caught.value)


def test_a_result_pointing_outside_is_not_read_by_the_next_task(env: Env) -> None:
    """A compromised executor returns ``/etc/passwd`` as its image; the next task's reference is refused."""
    from hugginggpt.agent.scheduler import substitute

    leaked = {"image": str(env.outside / "secret.png")}
    value = substitute("<resource>-0", "image", {0: leaked}, "image-classification")
    with pytest.raises(ResourceError, match="escapes the allowed folders"):
        env.tool().invoke({"image": value})
    assert env.executor.calls == []


def test_secrets_are_redacted_from_the_trace(tmp_path) -> None:
    """Tokens in the request and in settings never reach the trace file on disk."""
    from hugginggpt.agent.trace import Trace

    trace = Trace(tmp_path / "trace.json", input="use hf_abcdefghijklmnop and sk-proj-ABCDEFGH12345678",
                  settings={"api_key": "plain-secret-value", "HF_TOKEN": "x" * 12, "model": "gpt"})
    trace.add_llm_call("planning", "Authorization: Bearer abcdefgh.ijklmnop", "ok")
    text = trace.write().read_text()
    for secret in ("hf_abcdefghijklmnop", "sk-proj-ABCDEFGH12345678", "plain-secret-value", "x" * 12,
                   "abcdefgh.ijklmnop"):
        assert secret not in text
    assert '"model": "gpt"' in text


def test_every_attack_was_run(env: Env) -> None:
    """The table is not empty and every row ran (rows deselected in this session are run here)."""
    assert len(ATTACKS) >= 40
    assert len({a.name for a in ATTACKS}) == len(ATTACKS)
    for attack in ATTACKS:
        if attack.name not in RAN:
            env.executor.calls.clear()
            run_attack(attack, env)
    assert RAN == {a.name for a in ATTACKS}
