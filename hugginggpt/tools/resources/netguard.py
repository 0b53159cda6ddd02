"""Which network addresses a URL download may connect to: public ones only, unless the user says so.

A URL in a plan is written by an untrusted LLM, so without this guard a hostile plan could make the
user's machine fetch ``http://169.254.169.254/`` (cloud metadata), ``http://127.0.0.1:8080/`` (a
local service) or a LAN host (SSRF). The check runs where the socket is opened: the host is resolved,
*every* address it resolves to must pass the policy, and the socket connects to one of exactly those
checked addresses. There is no second lookup between check and connect, so DNS rebinding cannot slip
a private address in, and every redirect hop that opens a connection is checked the same way.
Odd spellings of an address (``2130706433``, ``0x7f.1``, ``[::ffff:127.0.0.1]``) are normalised by the
resolver before the check sees them.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

import httpcore
import httpx

from hugginggpt import config
from hugginggpt.errors import ResourceError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressPolicy = Callable[[IPAddress, int], str | None]
"""``policy(address, port)`` -> why a connection there is refused, or ``None`` to allow it."""

ALLOW_PRIVATE_ENV = config.var("allow_private_urls")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # well-known NAT64 prefix: the last 32 bits are IPv4

# The IANA special-purpose address registries (IPv4 and IPv6, as of 2025), denied explicitly: Python's
# ``is_global`` tables lag behind them and call some of these global (``fec0::/10``, ``192.0.0.8``). A
# few registry entries IANA marks globally reachable (anycast services, AS112) are denied too: a URL in a
# plan has no business there. Embedded IPv4 forms (mapped, 6to4, NAT64) are checked as their IPv4.
SPECIAL_PURPOSE = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "::/96", "::ffff:0:0/96", "64:ff9b:1::/48", "100::/64", "100:0:0:1::/64", "2001::/23", "2001:db8::/32",
    "2620:4f:8000::/48", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
))


def _special_purpose(ip: IPAddress) -> bool:
    return any(ip.version == net.version and ip in net for net in SPECIAL_PURPOSE)


# Named first so the error says *why*; the deny list and ``not is_global`` below catch the rest.
_PRIVATE_KINDS: tuple[tuple[str, Callable[[IPAddress], bool]], ...] = (
    ("loopback", lambda ip: ip.is_loopback),
    ("unspecified", lambda ip: ip.is_unspecified),
    ("link-local", lambda ip: ip.is_link_local),
    ("multicast", lambda ip: ip.is_multicast),
    ("reserved", lambda ip: ip.is_reserved),
    ("private", lambda ip: ip.is_private),
    ("not globally routable", lambda ip: not ip.is_global),
    ("special-purpose (IANA)", _special_purpose),
)


def private_urls_allowed_by_env() -> bool:
    """Whether ``HUGGINGGPT_ALLOW_PRIVATE_URLS`` is switched on (``1``/``true``/``yes``/``on``: ``config.switch``)."""
    return bool(config.switch("allow_private_urls"))


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (IPv4-mapped, 6to4, NAT64), which is where it leads."""
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def public_only(address: IPAddress, port: int) -> str | None:
    """The default policy: refuse loopback, private, link-local, multicast, reserved and unspecified
    addresses (also inside IPv4-mapped, 6to4 and NAT64 IPv6 forms); any port is fine."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        reason = public_only(embedded, port)
        return f"{reason}, as {embedded}" if reason else None
    for kind, matches in _PRIVATE_KINDS:
        if matches(address):
            return kind
    return None


def allow_any(address: IPAddress, port: int) -> str | None:
    """The policy when the user allowed private URLs: every address is fine."""
    return None


def resolve(host: str, port: int, timeout: float | None = None) -> list[tuple]:
    """``socket.getaddrinfo(host, port)`` for TCP, ending by ``timeout`` seconds.

    The system resolver has no timeout of its own (a slow DNS server holds it for many seconds), so it
    runs in a daemon thread of its own; past the timeout it is left to finish and nothing waits for it.
    """
    if timeout is None:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    outcome: list[Any] = []
    done = threading.Event()

    def lookup() -> None:
        try:
            outcome.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            outcome.append(exc)
        done.set()

    threading.Thread(target=lookup, name="hugginggpt-resolve", daemon=True).start()
    if not done.wait(timeout):
        raise httpcore.ConnectTimeout(f"resolving host {host!r} took longer than the download's deadline")
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def checked_addresses(host: str, port: int, policy: AddressPolicy, timeout: float | None = None) -> list[str]:
    """Resolve ``host`` (within ``timeout`` seconds) and return its addresses, or raise ``ResourceError``
    if ANY fails ``policy``.

    Every address counts, not only the first: a name that resolves to a public and a private address
    could otherwise be connected to the private one.
    """
    try:
        infos = resolve(host, port, timeout)
    except (socket.gaierror, UnicodeError) as exc:
        raise httpcore.ConnectError(f"cannot resolve host {host!r}: {exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%", 1)[0])  # drop an IPv6 scope id ("fe80::1%eth0")
        reason = policy(ip, port)
        if reason:
            spelled = "" if host.strip("[]") == text else f"{host} resolves to "
            raise ResourceError(None, f"refusing to download from a private network address: {spelled}{text} "
                                      f"({reason}) (set {ALLOW_PRIVATE_ENV}=1 to allow)")
    return addresses


def _within(deadline: float | None, timeout: float | None) -> float | None:
    """``timeout`` shortened to what is left before ``deadline``; raises ReadTimeout when nothing is left."""
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the download's deadline has passed")
    return left if timeout is None else min(timeout, left)


class DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every wait ends by one deadline: a server dripping its headers (or a
    chain of slow redirects, each a new stream) cannot hold a download past its ``download_timeout``."""

    def __init__(self, stream: httpcore.NetworkStream, deadline: float | None):
        self._stream = stream
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _within(self._deadline, timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _within(self._deadline, timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        stream = self._stream.start_tls(ssl_context, server_hostname, _within(self._deadline, timeout))
        return DeadlineStream(stream, self._deadline)

    def get_extra_info(self, info: str) -> object:
        return self._stream.get_extra_info(info)


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore's socket opener, but only to addresses the policy allows: checked and pinned in one step.

    With a ``deadline`` (``time.monotonic()`` seconds), connecting and every read and write end by it.
    """

    def __init__(self, policy: AddressPolicy, deadline: float | None = None):
        self.policy = policy
        self.deadline = deadline
        self._sockets = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable | None = None) -> httpcore.NetworkStream:
        last_error: Exception | None = None
        for address in checked_addresses(host, port, self.policy, _within(self.deadline, timeout)):
            try:  # a literal IP: the OS does no second lookup, so we connect where we checked
                stream = self._sockets.connect_tcp(address, port, timeout=_within(self.deadline, timeout),
                                                   local_address=local_address, socket_options=socket_options)
                return DeadlineStream(stream, self.deadline)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        raise last_error or httpcore.ConnectError(f"no address for host {host!r}")

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable | None = None) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not used for URL downloads")

    def sleep(self, seconds: float) -> None:
        self._sockets.sleep(seconds)


class GuardedTransport(httpx.HTTPTransport):
    """An httpx transport whose connections go through ``GuardedBackend``.

    httpx has no public switch for the network backend, so the connection pool is rebuilt with one
    (``network_backend`` is public httpcore API). Environment proxies are not used: through a proxy
    we would check the proxy's address, not the target's.
    """

    def __init__(self, policy: AddressPolicy, deadline: float | None = None):
        super().__init__(verify=_ssl_context(), trust_env=False)
        self._pool = httpcore.ConnectionPool(ssl_context=_ssl_context(),
                                             network_backend=GuardedBackend(policy, deadline))


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for all downloads: loading the CA bundle per download costs time."""
    return httpx.create_ssl_context()


def download_client(policy: AddressPolicy, timeout: float, deadline: float | None = None) -> httpx.Client:
    """The client a download uses: our sockets (the policy checked, every wait ended by ``deadline``),
    except when private URLs are allowed and the environment names a proxy: then httpx's own, through it."""
    if policy is allow_any and urllib.request.getproxies():
        return httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False, verify=_ssl_context())
    return httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False,
                        transport=GuardedTransport(policy, deadline))
