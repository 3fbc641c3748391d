"""Who is really calling when a reverse proxy stands in front: the client address and scheme
that a trusted proxy forwarded, and forwarding headers from anyone else set aside.

A proxy on the same host forwards every visitor from 127.0.0.1, so the address the socket
shows says nothing about the visitor. Only a peer listed in SERVEBOOK_TRUSTED_PROXIES (an
address or a network) is believed: for its requests the client is the rightmost hop of
X-Forwarded-For (or, without it, of Forwarded) that is not itself trusted, since each proxy
appends the address it saw and everything further left came from the client and may be
forged (X-Real-IP serves when neither is sent; with none of them the client is unknown);
and the scheme is its X-Forwarded-Proto (or Forwarded proto=). A request with
forwarding headers from any other peer keeps its socket's address and scheme, and is marked
so that an app listening on loopback treats it as coming from beyond (app.security.exposure).
"""

from collections.abc import Sequence
from ipaddress import IPv4Network, IPv6Network, ip_address
from typing import Literal

from starlette.types import ASGIApp, Receive, Scope, Send

Network = IPv4Network | IPv6Network
# Where a request's state says how its forwarding headers were taken.
FORWARDING_STATE = "forwarding"
Forwarding = Literal["trusted", "untrusted"]
# Headers that only a proxy sets: seeing any means a proxy (or someone posing as one) is there.
FORWARDING_HEADERS = frozenset(
    {b"forwarded", b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host", b"x-real-ip"}
)
SCHEMES = frozenset({"http", "https"})
# The client of a trusted proxy that did not say whom it forwarded: judged as from beyond.
UNKNOWN = "unknown"


def address_of(node: str) -> str:
    """A hop as written ("192.0.2.1", "192.0.2.1:4711", "[2001:db8::1]:80", quoted, or an
    obfuscated name) as a bare address where it is one, else the text as it came."""
    node = node.strip().strip('"')
    if node.startswith("["):
        node = node[1:].partition("]")[0]
    elif node.count(":") == 1:
        node = node.partition(":")[0]
    try:
        return str(ip_address(node))
    except ValueError:
        return node


def is_trusted(address: str, trusted: Sequence[Network]) -> bool:
    try:
        ip = ip_address(address)
    except ValueError:
        return False  # "unknown", "_hidden" and the like: never a proxy of ours
    return any(ip in network for network in trusted)


def forwarded_pairs(value: str) -> list[dict[str, str]]:
    """RFC 7239 elements, left to right, each as its lower-cased parameters."""
    elements = []
    for element in value.split(","):
        pairs = (part.partition("=") for part in element.split(";") if "=" in part)
        elements.append({k.strip().lower(): v.strip().strip('"') for k, _, v in pairs})
    return elements


def client_hop(hops: Sequence[str], peer: str, trusted: Sequence[Network]) -> str:
    """The rightmost hop not trusted; the leftmost when every hop is trusted."""
    chain = [*hops, peer]
    for hop in reversed(chain):
        if not is_trusted(hop, trusted):
            return hop
    return chain[0]


class ForwardedClientMiddleware:
    """Rewrites a trusted proxy's request to the client's address and scheme (pure ASGI,
    before everything that reads either: exposure, links, secure cookies)."""

    def __init__(self, app: ASGIApp, trusted: Sequence[Network]) -> None:
        self.app = app
        self.trusted = tuple(trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.judge(scope)
        await self.app(scope, receive, send)

    def judge(self, scope: Scope) -> None:
        headers: dict[bytes, list[str]] = {}
        for name, value in scope["headers"]:
            if name in FORWARDING_HEADERS:
                headers.setdefault(name, []).append(value.decode("latin-1"))
        if not headers:
            return
        peer = address_of(scope["client"][0]) if scope.get("client") else ""
        state = scope.setdefault("state", {})
        if not is_trusted(peer, self.trusted):
            state[FORWARDING_STATE] = "untrusted"
            return
        state[FORWARDING_STATE] = "trusted"
        elements = forwarded_pairs(",".join(headers.get(b"forwarded", [])))
        if b"x-forwarded-for" in headers:
            hops = [address_of(h) for h in ",".join(headers[b"x-forwarded-for"]).split(",")]
        elif any("for" in e for e in elements):
            hops = [address_of(e.get("for", UNKNOWN)) for e in elements]
        else:
            hops = [address_of(h) for h in headers.get(b"x-real-ip", [UNKNOWN])[-1:]]
        scope["client"] = (client_hop(hops, peer, self.trusted), 0)
        if b"x-forwarded-proto" in headers:
            scheme = ",".join(headers[b"x-forwarded-proto"]).split(",")[-1]
        else:
            scheme = next((e["proto"] for e in reversed(elements) if "proto" in e), "")
        scheme = scheme.strip().lower()
        if scheme in SCHEMES:
            scope["scheme"] = scheme
