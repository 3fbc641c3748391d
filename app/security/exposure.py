"""Serving beyond loopback: allowed only once an access token exists, and only under the
host names the settings allow.

The app decides for itself whether it is exposed, whichever way it was started: by the
configured host (`SERVEBOOK_HOST`, which `servebook serve --host` sets) and by the
addresses its own process listens on, which it reads at the first request (servers bind
their sockets after the lifespan has started). So `uvicorn app.main:create_app --factory
--host 0.0.0.0` is exposed even though the settings say 127.0.0.1: every request then
needs a token, and without one every write is refused.

Each request is judged too (`request_is_exposed`): behind a reverse proxy on this host the
app listens on loopback, yet its visitors are not local. A request that a trusted proxy
forwarded (SERVEBOOK_TRUSTED_PROXIES) is local only when the client it names is; one that
carries forwarding headers from a peer nobody trusted came through some proxy whose
visitors cannot be told apart, so it is treated as from beyond: writes need a token.
"""

import logging

import psutil
from fastapi import FastAPI, Request
from sqlalchemy.orm import Session
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import Receive, Scope, Send

from app.config import Settings, is_loopback
from app.security.forwarded import FORWARDING_STATE
from app.security.tokens import TokenRepository

log = logging.getLogger("servebook.security")

# Host headers the app always answers to.
LOOPBACK_HOST_NAMES = ["127.0.0.1", "localhost", "[::1]", "::1"]
# The in-process test client's host name, answered for that client only: its scope names
# "testclient" as the peer, which no socket can (a peer is an address).
TEST_CLIENT_HOST, TEST_CLIENT_PEER = "testserver", "testclient"
WILDCARD_HOSTS = ("0.0.0.0", "::", "[::]", "")


class ExposedWithoutTokens(RuntimeError):
    pass


def is_exposed(settings: Settings) -> bool:
    return not is_loopback(settings.host)


def allowed_host_names(settings: Settings) -> list[str]:
    """Host headers this app answers: loopback names, SERVEBOOK_ALLOWED_HOSTS, and the
    configured host when it is a name or an address rather than a wildcard."""
    names = [*LOOPBACK_HOST_NAMES, *settings.allowed_hosts]
    if settings.host not in WILDCARD_HOSTS:
        names.append(settings.host)
    return list(dict.fromkeys(names))


def check_exposure(settings: Settings, session: Session) -> None:
    """Refuse to serve beyond loopback until at least one access token exists."""
    if is_exposed(settings) and TokenRepository(session).count_active() == 0:
        raise ExposedWithoutTokens(
            f"Refusing to serve on {settings.host}: no access token exists. Create one with "
            "`servebook token create --role maintainer --name NAME`, or serve on 127.0.0.1."
        )
    if is_exposed(settings) and not settings.allowed_hosts and settings.host in WILDCARD_HOSTS:
        log.warning(
            "serving on %s with no SERVEBOOK_ALLOWED_HOSTS: only loopback host names are answered",
            settings.host,
        )


def listening_addresses() -> list[str]:
    """The addresses this process accepts connections on."""
    connections = psutil.Process().net_connections(kind="inet")
    return [c.laddr.ip for c in connections if c.status == psutil.CONN_LISTEN and c.laddr]


def app_is_exposed(app: FastAPI) -> bool:
    """Whether this app is reachable beyond loopback; worked out once, at the first request."""
    exposed: bool | None = getattr(app.state, "exposed", None)
    if exposed is None:
        beyond = [a for a in listening_addresses() if not is_loopback(a)]
        exposed = is_exposed(app.state.settings) or bool(beyond)
        if beyond and not is_exposed(app.state.settings):
            log.warning(
                "listening on %s beyond loopback: every write needs an access token",
                ", ".join(sorted(set(beyond))),
            )
        app.state.exposed = exposed
    return exposed


def request_is_exposed(request: Request) -> bool:
    """Whether this request may come from beyond loopback: the app is exposed, or the
    request came through a proxy (app.security.forwarded) for a client that is not local."""
    if app_is_exposed(request.app):
        return True
    forwarding = getattr(request.state, FORWARDING_STATE, None)
    if forwarding == "untrusted":
        return True
    client = request.client.host if request.client else ""
    return forwarding == "trusted" and not is_loopback(client)


class AnsweredHostsMiddleware(TrustedHostMiddleware):
    """Starlette's host check, which also answers the in-process test client under its own
    name; a request over a socket naming `testserver` is refused like any other name."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and _is_test_client(scope):
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def _is_test_client(scope: Scope) -> bool:
    peer = scope.get("client") or ("",)
    host = dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1")
    return peer[0] == TEST_CLIENT_PEER and host.split(":")[0] == TEST_CLIENT_HOST
