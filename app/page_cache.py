"""Pages and JSON cached per catalog revision, and answered before routing.

A recipe page, a fit table or their JSON changes only when the catalog revision moves, so
the body rendered at a revision is kept and served again until it does. Every request still
reads the revision (one indexed row, off the event loop), so a change committed by any app
process shows on the next request of every other: nothing is served past a change.

The route renders (`serve_at_revision`); `CachedAtRevision` answers later requests for the
same URL, language and variant before routing, dependencies and a session, as cheaply as a
304, and answers revalidations with a 304.
"""

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from fastapi import Request
from fastapi.responses import Response
from starlette.datastructures import URL, Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from app.i18n import current_locale

REVISION_TAG = re.compile(r'W/"r\d+-[\w-]+"')


@dataclass(frozen=True, slots=True)
class CachedBody:
    revision: int
    body: bytes
    media_type: str
    # The route that rendered it: metrics count a cached answer under its route template.
    route: Any


class PageCache:
    """The newest body of each (variant, URL); the least recently used go first past `size`.
    Only the newest revision is kept: an older one is never served again."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self.bodies: OrderedDict[tuple[str, str], CachedBody] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, variant: str, url: str, revision: int) -> CachedBody | None:
        with self.lock:
            found = self.bodies.get((variant, url))
            if found is None or found.revision != revision:
                return None
            self.bodies.move_to_end((variant, url))
            return found

    def knows(self, variant: str, url: str) -> bool:
        """Whether a body of this URL is kept at any revision: only then is the revision
        worth reading before routing."""
        return (variant, url) in self.bodies

    def put(self, variant: str, url: str, cached: CachedBody) -> None:
        with self.lock:
            kept = self.bodies.get((variant, url))
            # A request that read an older revision finishes after a newer one: keep the newer.
            if kept is not None and kept.revision > cached.revision:
                return
            self.bodies[(variant, url)] = cached
            self.bodies.move_to_end((variant, url))
            while len(self.bodies) > self.size:
                self.bodies.popitem(last=False)


def revision_etag(revision: int, variant: str) -> str:
    return f'W/"r{revision}-{variant}"'


def response_variant(path: str, headers: Headers) -> str:
    """What one URL can answer: JSON under /api, else a page or its htmx fragment, in the
    reader's language."""
    if path.startswith("/api/"):
        return "json"
    restoring = headers.get("HX-History-Restore-Request") == "true"
    fragment = headers.get("HX-Request") == "true" and not restoring
    return f"{'fragment' if fragment else 'page'}-{current_locale()}"


def revision_headers(etag: str) -> dict[str, str]:
    # Clients revalidate every time (`no-cache`), so a change shows on the next request.
    return {"ETag": etag, "Cache-Control": "no-cache", "Vary": "HX-Request"}


def not_modified(etag: str) -> Response:
    return Response(status_code=304, headers=revision_headers(etag))


def cached_response(etag: str, cached: CachedBody) -> Response:
    return Response(cached.body, media_type=cached.media_type, headers=revision_headers(etag))


def serve_at_revision(request: Request, revision: int, build: Callable[[], Response]) -> Response:
    """A page or JSON body that changes only with the catalog revision: a 304 for its
    current ETag, else the body rendered earlier at this revision, else `build()` (kept when
    it is a 200)."""
    variant = response_variant(request.url.path, request.headers)
    etag = revision_etag(revision, variant)
    if etag in request.headers.get("if-none-match", ""):
        return not_modified(etag)
    cache: PageCache = request.app.state.page_cache
    url = str(request.url)
    cached = cache.get(variant, url, revision)
    if cached is None:
        response = build()
        if response.status_code != 200:
            return response
        media_type = response.media_type or "text/html"
        cached = CachedBody(revision, bytes(response.body), media_type, request.scope.get("route"))
        cache.put(variant, url, cached)
    return cached_response(etag, cached)


class CachedAtRevision:
    """Answer a revision-cached URL before routing: a 304 when the client's ETag is current,
    the kept body when one was rendered at the current revision; anything else goes on to
    the app, which answers in full.

    The revision is read only for a request that can be answered here (it sends one of these
    ETags back, or its URL has a kept body): static files and other pages pay nothing.
    Inside the language middleware: the ETag and the kept body name the reader's language.
    """

    def __init__(self, app: ASGIApp, cache: PageCache) -> None:
        self.app = app
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        read_revision = scope.get("state", {}).get("read_revision")
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD") or not read_revision:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        tags = headers.get("if-none-match", "")
        variant = response_variant(scope["path"], headers)
        url = str(URL(scope=scope))
        if not (self.cache.knows(variant, url) or REVISION_TAG.search(tags)):
            await self.app(scope, receive, send)
            return
        revision = await anyio.to_thread.run_sync(read_revision)
        etag = revision_etag(revision, variant)
        cached = self.cache.get(variant, url, revision)
        if cached is not None:
            scope["route"] = cached.route
        if etag in tags:
            await not_modified(etag)(scope, receive, send)
        elif cached is not None:
            await cached_response(etag, cached)(scope, receive, send)
        else:
            await self.app(scope, receive, send)
