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
import os
import socket
import ssl
from collections.abc import Callable, Iterable

import httpcore
import httpx

from hugginggpt.errors import ResourceError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressPolicy = Callable[[IPAddress, int], str | None]
"""``policy(address, port)`` -> why a connection there is refused, or ``None`` to allow it."""

ALLOW_PRIVATE_ENV = "HUGGINGGPT_ALLOW_PRIVATE_URLS"
_TRUE = frozenset({"1", "true", "yes", "on"})
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # well-known NAT64 prefix: the last 32 bits are IPv4

# Named first so the error says *why*; ``not is_global`` below catches the rest (CGNAT, benchmarks...).
_PRIVATE_KINDS: tuple[tuple[str, Callable[[IPAddress], bool]], ...] = (
    ("loopback", lambda ip: ip.is_loopback),
    ("unspecified", lambda ip: ip.is_unspecified),
    ("link-local", lambda ip: ip.is_link_local),
    ("multicast", lambda ip: ip.is_multicast),
    ("reserved", lambda ip: ip.is_reserved),
    ("private", lambda ip: ip.is_private),
    ("not globally routable", lambda ip: not ip.is_global),
)


def private_urls_allowed_by_env() -> bool:
    """Whether ``HUGGINGGPT_ALLOW_PRIVATE_URLS`` is set to ``1``/``true`` (also ``yes``/``on``)."""
    return os.environ.get(ALLOW_PRIVATE_ENV, "").strip().lower() in _TRUE


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


def checked_addresses(host: str, port: int, policy: AddressPolicy) -> list[str]:
    """Resolve ``host`` and return its addresses, or raise ``ResourceError`` if ANY fails ``policy``.

    Every address counts, not only the first: a name that resolves to a public and a private address
    could otherwise be connected to the private one.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
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


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore's socket opener, but only to addresses the policy allows: checked and pinned in one step."""

    def __init__(self, policy: AddressPolicy):
        self.policy = policy
        self._sockets = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable | None = None) -> httpcore.NetworkStream:
        last_error: Exception | None = None
        for address in checked_addresses(host, port, self.policy):
            try:  # a literal IP: the OS does no second lookup, so we connect where we checked
                return self._sockets.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                 socket_options=socket_options)
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

    def __init__(self, policy: AddressPolicy):
        super().__init__(verify=_ssl_context(), trust_env=False)
        self._pool = httpcore.ConnectionPool(ssl_context=_ssl_context(), network_backend=GuardedBackend(policy))


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for all downloads: loading the CA bundle per download costs time."""
    return httpx.create_ssl_context()


def download_client(policy: AddressPolicy, timeout: float) -> httpx.Client:
    """The client a download uses: guarded unless the policy allows everything (then as before,
    environment proxies included)."""
    if policy is allow_any:
        return httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False, verify=_ssl_context())
    return httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False, transport=GuardedTransport(policy))
