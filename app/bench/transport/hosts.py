"""Which hosts the benchmark client may talk to: loopback, plus hosts named explicitly.

Checked before any request. Names are compared after normalising them (case, a trailing
dot, brackets), never resolved, so a DNS answer cannot widen what the configuration allows.
The loopback names are then connected to at the addresses they stand for
(`loopback_addresses`), without asking the resolver: `localhost.` or `ip6-localhost` are not
in every hosts file, and a resolver that misses one asks DNS, whose answer would become the
target.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from app.bench.transport.url_schema import written_as_stated
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register

_V4_THEN_V6 = ("127.0.0.1", "::1")
# Each name for this machine, by the addresses it stands for (glibc's and Debian's
# /etc/hosts defaults), in the order they are tried.
LOOPBACK_NAMES: dict[str, tuple[str, ...]] = {
    "localhost": _V4_THEN_V6,
    "localhost.localdomain": _V4_THEN_V6,
    "localhost6": ("::1",),
    "localhost6.localdomain6": ("::1",),
    "ip6-localhost": ("::1",),
    "ip6-loopback": ("::1",),
}
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
HOST_REFUSED_FOR_LABEL = register(
    "bench.host_refused_for_label",
    _l(
        "refusing to benchmark %(host)s on worker %(label)s: the label's allow-list (loopback, "
        "SERVEBOOK_BENCH_ALLOWED_HOSTS and the label's hosts in SERVEBOOK_BENCH_WORKER_HOSTS, "
        "a JSON object of lists by label) does not hold it; list it there, or name a label "
        "whose list holds it"
    ),
)

NOT_AS_STATED = register(
    "bench.url_not_as_stated",
    _l(
        "%(url)s: write a queued server's URL as http(s)://HOST[:PORT][/PATH], the host as "
        "listed (localhost, 127.0.0.1, [::1] or an allowed host, in lower case), a port from 1 "
        "to 65535, and no user, query or fragment"
    ),
)


class HostNotAllowedError(ValueError):
    """The URL points at a host that the configuration does not allow (in English as
    `str(error)`, coded as `said` for a page)."""

    def __init__(self, said: Sentence) -> None:
        super().__init__(english(said))
        self.said = said


def normalised_host(host: str) -> str:
    """A host as compared: no brackets, lower case, no trailing dot (`localhost.` is the
    fully qualified `localhost`)."""
    host = host.strip("[]").lower()
    return host.removesuffix(".") if not host.endswith("..") else host


def loopback_addresses(host: str) -> tuple[str, ...]:
    """The addresses a loopback name stands for, to connect to without resolving it; empty
    for anything else (an address is connected to as written)."""
    return LOOPBACK_NAMES.get(normalised_host(host), ())


def is_loopback(host: str) -> bool:
    host = normalised_host(host)
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
    extra = {normalised_host(name) for name in allowed_hosts}
    if normalised_host(host) in extra:
        return
    raise HostNotAllowedError(HOST_REFUSED(host=repr(host)))


def check_url_for_worker(url: str, allowed_hosts: Iterable[str], label: str | None) -> None:
    """`check_url_allowed` for a job queued for the worker `label`, whose allow-list is
    `allowed_hosts`: a refusal of the host names the label and what its list holds. A
    queued URL is also written as the OpenAPI document states it (app.bench.transport.
    url_schema), so that what the document calls invalid is refused."""
    hosts = list(allowed_hosts)
    try:
        check_url_allowed(url, hosts)
    except HostNotAllowedError as error:
        host = urlsplit(url).hostname
        if label is None or error.said.code != HOST_REFUSED.code or not host:
            raise
        said = HOST_REFUSED_FOR_LABEL(host=repr(host), label=repr(label))
        raise HostNotAllowedError(said) from error
    if not written_as_stated(url, hosts):
        raise HostNotAllowedError(NOT_AS_STATED(url=repr(url)))
