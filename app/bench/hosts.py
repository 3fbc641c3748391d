"""Which hosts the benchmark client may talk to: loopback, plus hosts named explicitly.

Checked before any request. Names are compared as written, never resolved, so a DNS answer
cannot widen what the configuration allows.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
HTTP_ONLY = register("bench.http_only", _l("%(url)s: only http and https URLs are supported"))
NO_HOST = register("bench.no_host", _l("%(url)s: no host in URL"))
HOST_REFUSED = register(
    "bench.host_refused",
    _l(
        "refusing to benchmark %(host)s: only loopback hosts (127.0.0.0/8, ::1, localhost) "
        "are allowed unless the host is listed in SERVEBOOK_BENCH_ALLOWED_HOSTS (a JSON list; "
        "a remote worker takes --allow-host)"
    ),
)


class HostNotAllowedError(ValueError):
    """The URL points at a host that the configuration does not allow (in English as
    `str(error)`, coded as `said` for a page)."""

    def __init__(self, said: Sentence) -> None:
        super().__init__(english(said))
        self.said = said


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
        raise HostNotAllowedError(HTTP_ONLY(url=repr(url)))
    host = parts.hostname
    if not host:
        raise HostNotAllowedError(NO_HOST(url=repr(url)))
    if is_loopback(host):
        return
    extra = {name.strip("[]").lower().rstrip(".") for name in allowed_hosts}
    if host.lower().rstrip(".") in extra:
        return
    raise HostNotAllowedError(HOST_REFUSED(host=repr(host)))
