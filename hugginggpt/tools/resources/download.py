"""Downloading an http(s) URL into a folder: bounded in size, time and redirects, never half a file.

Redirects are followed by hand so each hop's scheme is checked: a server cannot bounce us to
``file://`` or another scheme. The size limit is enforced from ``Content-Length`` before reading
and again while streaming (servers may omit or lie about the header). The timeout is one deadline
for the whole download: connecting, headers, every redirect hop and the body, so a server that
trickles bytes (or headers, or redirects) cannot hold a task past it.
Which addresses may be connected to at all (first hop and every redirect) is ``netguard``'s policy:
public ones only by default.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path, PurePosixPath
from urllib.parse import urljoin, urlsplit
from uuid import uuid4

import httpx

from hugginggpt.errors import ResourceError, error_line
from hugginggpt.tools.resources.netguard import (
    AddressPolicy,
    download_client,
    public_only,
)
from hugginggpt.tools.resources.sniff import (
    safe_suffix,
    sniff_suffix,
    suffix_for_content_type,
)

ALLOWED_SCHEMES = frozenset({"http", "https"})
MAX_REDIRECTS = 5
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})


def format_size(n_bytes: int) -> str:
    """``52428800`` -> ``"50 MiB"``: limits as people write them."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n_bytes >= size:
            value = n_bytes / size
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n_bytes} bytes"


def url_scheme(url: str) -> str:
    return urlsplit(url).scheme.lower()


def download(url: str, folder: str | Path, *, max_bytes: int, timeout: float,
             max_redirects: int = MAX_REDIRECTS, address_policy: AddressPolicy = public_only) -> Path:
    """Download ``url`` into ``folder`` under a generated name; return the new file's path.

    Raises ``ResourceError`` for a disallowed scheme (also after a redirect), an address the policy
    refuses (also after a redirect), too many redirects, an HTTP error status, a body over
    ``max_bytes``, a timeout or a network failure.
    """
    if url_scheme(url) not in ALLOWED_SCHEMES:
        raise ResourceError(None, f"only http(s) URLs can be downloaded: {url}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    client = download_client(address_policy, timeout, deadline)
    try:
        return _fetch(client, url, folder, max_bytes=max_bytes, timeout=timeout,
                      deadline=deadline, max_redirects=max_redirects)
    except httpx.TimeoutException:
        raise ResourceError(None, f"download timed out after {timeout:g} s: {url}") from None
    except httpx.HTTPError as exc:
        raise ResourceError(None, f"download failed: {url}: {error_line(exc)}") from None
    except httpx.InvalidURL as exc:  # e.g. a host httpx cannot parse ("0177.0.0.1"); not an HTTPError
        raise ResourceError(None, f"invalid URL {url!r}: {exc}") from None
    finally:
        client.close()


def _fetch(client: httpx.Client, url: str, folder: Path, *, max_bytes: int, timeout: float,
           deadline: float, max_redirects: int) -> Path:
    current = url
    for _hop in range(max_redirects + 1):
        left = deadline - time.monotonic()
        if left <= 0:
            raise ResourceError(None, f"download timed out after {timeout:g} s: {url}")
        # Each hop's waits end by the deadline: through the guarded sockets exactly, and through
        # httpx's own (private URLs allowed) per wait, never longer than the time left.
        with client.stream("GET", current, timeout=httpx.Timeout(min(timeout, left))) as response:
            if response.status_code in _REDIRECT_CODES and "location" in response.headers:
                target = urljoin(current, response.headers["location"])
                if url_scheme(target) not in ALLOWED_SCHEMES:
                    raise ResourceError(None, f"redirect to a non-http(s) URL is not allowed: {current} -> {target}")
                current = target
                continue
            if response.status_code >= 400:
                raise ResourceError(None, f"download failed: HTTP {response.status_code} from {current}")
            return _save_body(response, current, folder, max_bytes=max_bytes, timeout=timeout, deadline=deadline)
    raise ResourceError(None, f"too many redirects (more than {max_redirects}) starting at {url}")


def _save_body(response: httpx.Response, url: str, folder: Path, *, max_bytes: int, timeout: float,
               deadline: float) -> Path:
    too_large = f"download exceeds {format_size(max_bytes)} limit: {url}"
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise ResourceError(None, too_large)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".download-", suffix=".tmp")
    try:
        received = 0
        head = b""
        with os.fdopen(fd, "wb") as fh:
            for chunk in response.iter_bytes():  # as they arrive: limits checked per read
                received += len(chunk)
                if received > max_bytes:
                    raise ResourceError(None, too_large)
                if time.monotonic() > deadline:
                    raise ResourceError(None, f"download timed out after {timeout:g} s: {url}")
                if len(head) < 64:
                    head += chunk[: 64 - len(head)]
                fh.write(chunk)
        suffix = (sniff_suffix(head) or suffix_for_content_type(response.headers.get("content-type"))
                  or safe_suffix(PurePosixPath(urlsplit(url).path).suffix) or ".bin")
        final = folder / f"{uuid4().hex}{suffix}"
        os.replace(tmp, final)
        return final
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
