"""Which hosts the benchmark client may talk to: loopback, plus hosts named explicitly.

Checked before any request. Names are compared as written, never resolved, so a DNS answer
cannot widen what the configuration allows.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class HostNotAllowedError(ValueError):
    """The URL points at a host that the configuration does not allow."""


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower().rstrip(".")
    if host in LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def check_url_allowed(url: str, allowed_hosts: Iterable[str] = ()) -> None:
    """Raise :class:`HostNotAllowedError` unless ``url`` is http(s) on an allowed host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise HostNotAllowedError(f"{url!r}: only http and https URLs are supported")
    host = parts.hostname
    if not host:
        raise HostNotAllowedError(f"{url!r}: no host in URL")
    if is_loopback(host):
        return
    extra = {name.strip("[]").lower().rstrip(".") for name in allowed_hosts}
    if host.lower().rstrip(".") in extra:
        return
    raise HostNotAllowedError(
        f"refusing to benchmark {host!r}: only loopback hosts (127.0.0.0/8, ::1, localhost) "
        "are allowed unless the host is listed in allowed_hosts"
    )
