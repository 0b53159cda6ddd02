"""Issue 31 items 2 and 3 for `hugginggpt mcp --http`: 20 silent and 20 half-header sockets were all still
open after 70 s, and so was a body that trickled. The MCP listener is now held by the same code as
`serve` (``hugginggpt.server.connections``): headers within 10 s, a body at 16 KiB/s after its first 10 s."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest

from tests.server.live import free_port, spawned_server

pytest.importorskip("mcp")

ROOT = Path(__file__).resolve().parents[2]


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts file descriptors in /proc")
@pytest.mark.timeout(600)
def test_every_socket_of_the_mcp_listener_has_a_deadline(tmp_path):
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HUGGINGGPT_HOME": str(tmp_path / "home"),
           "HUGGINGGPT_CONFIG": str(tmp_path / "config.toml"), "PYTHONPATH": str(ROOT)}
    env.pop("HUGGINGGPT_LLM", None)
    (tmp_path / "config.toml").write_text("")
    command = [sys.executable, "-m", "hugginggpt", "mcp", "--http", "--port", str(port)]
    with spawned_server("hugginggpt mcp --http", command, f"http://127.0.0.1:{port}/mcp", lambda answer: True,
                        log_path=tmp_path / "mcp.log", seconds=300, env=env, cwd=tmp_path) as process:
        before = fds(process.pid)
        sockets = []
        for kind in ("silent", "half-header", "slow body"):
            for _ in range(20):
                sock = socket.create_connection(("127.0.0.1", port))
                if kind == "half-header":
                    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                elif kind == "slow body":
                    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                 b"Accept: application/json, text/event-stream\r\nContent-Length: 10000\r\n\r\n{")
                sockets.append(sock)
        try:
            deadline = time.monotonic() + 40  # 10 s for headers, 10 s + 1 s for a body, and a margin for a busy machine
            for sock in sockets:  # each is closed by the server: EOF (after an error answer, for some)
                sock.settimeout(max(0.1, deadline - time.monotonic()))
                try:
                    while sock.recv(65536):
                        pass
                except ConnectionResetError:
                    pass
                except TimeoutError:
                    pytest.fail(f"a socket was still open 40 s after it was opened: {fds(process.pid) - before} in all")
            assert fds(process.pid) <= before + 2
        finally:
            for sock in sockets:
                sock.close()
