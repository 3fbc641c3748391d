"""Writes are rate-limited per token: each client that writes (a bearer token, a signed-in
session, or else its address) may make SERVEBOOK_WRITE_RATE_PER_MINUTE writes a minute, in
bursts up to that many; past it, a write gets 429 with Retry-After (seconds) and is not
read. Reads are never limited, nor the estimate and the plan, which compute and store
nothing. 0 turns the limit off.

A token bucket per client, in memory (each app process counts its own). The token itself is
not kept: the key is a digest of it, and the map holds at most MAX_CLIENTS, forgetting the
least recently seen, so made-up tokens cannot grow it.
"""

import hashlib
import math
import threading
import time
from collections import OrderedDict

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import english, register, render
from app.security.http import prefers_json
from app.security.principal import AUTH_COOKIE
from app.web import error_page

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Posted, but computed and answered without writing anything.
NOT_WRITES = frozenset({"/api/estimate", "/api/plan"})
MAX_CLIENTS = 10_000
TOO_MANY_WRITES = register(
    "request.too_many_writes",
    _l("Too many writes: at most %(most)s a minute for each token; try again in %(seconds)s s."),
)


class Buckets:
    """Each client's allowance, refilled at `per_minute` a minute up to `per_minute`."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self.rate = per_minute / 60.0
        self.levels: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self.lock = threading.Lock()

    def take(self, client: str, now: float | None = None) -> float:
        """0 when the write may go ahead (one taken), else the seconds until it may."""
        now = time.monotonic() if now is None else now
        with self.lock:
            level, then = self.levels.pop(client, (float(self.per_minute), now))
            level = min(float(self.per_minute), level + (now - then) * self.rate)
            wait = 0.0
            if level >= 1:
                level -= 1
            else:
                wait = (1 - level) / self.rate
            self.levels[client] = (level, now)
            while len(self.levels) > MAX_CLIENTS:
                self.levels.popitem(last=False)
            return wait


def client_key(scope: Scope) -> str:
    """Who writes: the bearer token or session cookie (as a digest), else the address."""
    headers = dict(scope.get("headers", []))
    credential = headers.get(b"authorization", b"")
    if not credential:
        request = Request(scope)
        credential = request.cookies.get(AUTH_COOKIE, "").encode()
    if credential:
        return "t:" + hashlib.sha256(credential).hexdigest()[:32]
    client = scope.get("client")
    return "a:" + (client[0] if client else "")


class WriteRateLimitMiddleware:
    def __init__(self, app: ASGIApp, per_minute: int) -> None:
        self.app = app
        self.buckets = Buckets(per_minute) if per_minute > 0 else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            self.buckets is None
            or scope["type"] != "http"
            or scope["method"] not in WRITE_METHODS
            or scope["path"] in NOT_WRITES
        ):
            await self.app(scope, receive, send)
            return
        wait = self.buckets.take(client_key(scope))
        if wait <= 0:
            await self.app(scope, receive, send)
            return
        seconds = max(1, math.ceil(wait))
        said = TOO_MANY_WRITES(most=self.buckets.per_minute, seconds=seconds)
        headers = {"Retry-After": str(seconds)}
        request = Request(scope)
        response: Response
        if prefers_json(request):
            body = {"detail": english(said), **said.as_json()}
            response = JSONResponse(body, status_code=429, headers=headers)
        else:
            response = error_page(request, render(said), 429, headers)
        await response(scope, receive, send)
