"""Issue 23, low item: resolving a URL's host name is inside the download's one deadline.

The system resolver has no timeout: a slow DNS server held a download for as long as it took, whatever
``download_timeout`` said. The deadline is the behaviour under test, so it is measured in wall time,
with margins far from both the limit (0.5 s) and the resolver's delay (8 s).
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

from hugginggpt.errors import ResourceError
from hugginggpt.tools.resources import Workspace


def test_a_slow_dns_answer_ends_at_the_download_deadline(tmp_path, monkeypatch):
    released = threading.Event()
    real = socket.getaddrinfo

    def slow_resolver(host, *args, **kwargs):
        if host == "slow-dns.example":
            released.wait(8)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 80))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_resolver)
    ws = Workspace(tmp_path / "run", download_timeout=0.5)
    started = time.monotonic()
    try:
        with pytest.raises(ResourceError, match="timed out after 0.5 s"):
            ws.resolve("http://slow-dns.example/cat.png", "image")
        assert time.monotonic() - started < 4
    finally:
        released.set()
