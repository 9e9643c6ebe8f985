"""Refusing webhook URLs that reach inside the network (SSRF).

A URL is refused when its host is, or resolves to, a loopback, private, link-local,
multicast, reserved or unspecified address (IPv4-mapped IPv6 included), unless private
addresses are allowed (``CALLASSIST_WEBHOOK_ALLOW_PRIVATE=true``, for tests and for
receivers on the same network). The check runs when a webhook is registered and again
before every delivery attempt (a name may resolve elsewhere later).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

RESOLVE_TIMEOUT_S = 2.0


class UrlRefused(ValueError):
    """The URL cannot be a webhook target; the message says why."""


def _internal(addr: str) -> bool:
    ip = ipaddress.ip_address(addr.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(
        ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_multicast or ip.is_reserved or ip.is_unspecified
    )


def check_syntax(url: str) -> tuple[str, int]:
    """``(host, port)`` of an http(s) URL, or :class:`UrlRefused`."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise UrlRefused("must be an http:// or https:// URL")
    if not parts.hostname:
        raise UrlRefused("has no host")
    if parts.username or parts.password:
        raise UrlRefused("must not carry credentials")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UrlRefused("has an invalid port") from exc
    return parts.hostname, port


async def check_url(url: str, *, allow_private: bool) -> None:
    """Raise :class:`UrlRefused` when ``url`` is malformed or reaches an internal address."""
    host, port = check_syntax(url)
    if allow_private:
        return
    try:
        infos = await asyncio.wait_for(
            asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM), RESOLVE_TIMEOUT_S
        )
    except (OSError, TimeoutError) as exc:
        raise UrlRefused(f"host {host} does not resolve") from exc
    addrs = {str(info[4][0]) for info in infos}
    if not addrs:
        raise UrlRefused(f"host {host} does not resolve")
    internal = sorted(a for a in addrs if _internal(a))
    if internal:
        raise UrlRefused(
            f"resolves to a loopback, private or link-local address ({internal[0]}); "
            "set CALLASSIST_WEBHOOK_ALLOW_PRIVATE=true to allow it"
        )
