"""Pages and JSON cached per revision, and answered before routing.

A recipe page, a fit table or their JSON changes only when the catalog revision moves; a
page that lists records (a detail page's pending count, /records) changes with the records
revision too, which every record and review moves. The body rendered at its revisions is
kept and served again until they move. Every request still reads both (one row: on a
SQLite file on the event loop, never waiting; otherwise in a worker thread), so a change
committed by any app process shows on the next request of every other: nothing is served
past a change.

A cached body is kept under the query parameters its page reads, not the whole query
string: `?utm=x` or any other parameter no route reads asks for the same page, so it is
answered from the same body and takes no slot of its own. The cache is bounded in bytes as
well as in entries.

The route renders (`serve_at_revision`); `CachedAtRevision` answers later requests for the
same URL, language and variant before routing, dependencies and a session, as cheaply as a
304, and answers revalidations with a 304.
"""

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

import anyio
from fastapi import Request
from fastapi.responses import Response
from pydantic import BaseModel
from starlette.datastructures import URL, Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from app.catalog.revision import Revisions
from app.i18n import current_locale
from app.i18n.negotiation import QUERY as LANGUAGE_QUERY
from app.write_priority import give_way_to_a_write

REVISION_TAG = re.compile(r'W/"r\d+(?:\.\d+)?-[\w-]+"')
# What one kept body costs beyond its bytes: its key, its entry and the objects around it.
ENTRY_OVERHEAD = 512
DEFAULT_ENTRIES = 1024
DEFAULT_BYTES = 24 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class CachedBody:
    revision: int
    # The records revision it was built at; None for a page that lists no records.
    records: int | None
    body: bytes
    media_type: str
    # The route that rendered it: metrics count a cached answer under its route template.
    route: Any

    def current_at(self, revisions: Revisions) -> bool:
        return self.revision == revisions.catalog and self.records in (None, revisions.records)

    def newer_than(self, other: "CachedBody") -> bool:
        return (self.revision, self.records or 0) > (other.revision, other.records or 0)

    def etag(self, variant: str) -> str:
        return revision_etag(self.revision, variant, self.records)

    @property
    def cost(self) -> int:
        return len(self.body) + ENTRY_OVERHEAD


class PageCache:
    """The newest body of each (variant, URL); the least recently used go first past
    `size` entries or `max_bytes`. Only the newest revision is kept: an older one is never
    served again."""

    def __init__(self, size: int = DEFAULT_ENTRIES, max_bytes: int = DEFAULT_BYTES) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.bytes = 0
        self.bodies: OrderedDict[tuple[str, str], CachedBody] = OrderedDict()
        # The query parameters the page at each path reads, as learnt when one was kept:
        # the key of a request for it before routing. Bounded like the bodies.
        self.reads: dict[str, frozenset[str] | None] = {}
        self.lock = threading.Lock()
        # One build at a time per (variant, URL), and how many wait on it.
        self.building: dict[tuple[str, str], tuple[threading.Lock, list[int]]] = {}

    def get(self, variant: str, url: str, revisions: Revisions) -> CachedBody | None:
        with self.lock:
            found = self.bodies.get((variant, url))
            if found is None or not found.current_at(revisions):
                return None
            self.bodies.move_to_end((variant, url))
            return found

    @contextmanager
    def one_build_at_a_time(self, variant: str, url: str) -> Iterator[None]:
        """Held while a body of this URL is built: a request that finds none kept waits for
        the one being built rather than building it too. Without it, every reader of a page
        whose revision had just moved built it at once (32 readers of /records took 20 MB
        more of the process's memory for good), and under a stream of submissions, which
        move the records revision, that was every page that lists records."""
        with self.lock:
            gate, waiting = self.building.setdefault((variant, url), (threading.Lock(), [0]))
            waiting[0] += 1
        try:
            with gate:
                yield
        finally:
            with self.lock:
                waiting[0] -= 1
                if not waiting[0]:
                    del self.building[(variant, url)]

    def knows(self, variant: str, url: str) -> bool:
        """Whether a body of this URL is kept at any revision: only then is the revision
        worth reading before routing."""
        return (variant, url) in self.bodies

    def key_for(self, scope: Scope) -> str | None:
        """The key of a request before routing: None when no page at its path was kept."""
        path = scope["path"]
        if path not in self.reads:
            return None
        return cache_key(URL(scope=scope), self.reads[path])

    def put(self, variant: str, url: str, cached: CachedBody, path: str, reads: Any) -> None:
        with self.lock:
            kept = self.bodies.get((variant, url))
            # A request that read an older revision finishes after a newer one: keep the newer.
            if kept is not None and kept.newer_than(cached):
                return
            if kept is not None:
                self.bytes -= kept.cost
            self.bodies[(variant, url)] = cached
            self.bodies.move_to_end((variant, url))
            self.bytes += cached.cost
            while self.bodies and (len(self.bodies) > self.size or self.bytes > self.max_bytes):
                _, dropped = self.bodies.popitem(last=False)
                self.bytes -= dropped.cost
            if path not in self.reads and len(self.reads) >= self.size:
                self.reads.clear()  # learnt again from the next page kept at each path
            self.reads[path] = reads


def cache_key(url: URL, reads: frozenset[str] | None) -> str:
    """The URL with only the query parameters its page reads, in a fixed order (each
    name's values in the order sent); None: every parameter counts."""
    if reads is None:
        return str(url)
    pairs = [pair for pair in parse_qsl(url.query, keep_blank_values=True) if pair[0] in reads]
    pairs.sort(key=lambda pair: pair[0])
    return str(url.replace(query=urlencode(pairs)))


def route_reads(route: Any) -> frozenset[str] | None:
    """The query parameters a route declares (a model's fields for a model of them); the
    language parameter is read outside and is part of every key's variant. None for a
    route whose declarations cannot be told."""
    found = getattr(route, "servebook_query_reads", False)
    if found is not False:
        return found
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return None
    names: set[str] = set()
    waiting = [dependant]
    while waiting:  # the route's own parameters and those of every dependency under it
        current = waiting.pop()
        waiting.extend(current.dependencies)
        for field in current.query_params:
            annotation = field.field_info.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                names.update(f.alias or name for name, f in annotation.model_fields.items())
            else:
                names.add(field.alias)
    reads = frozenset(names)
    route.servebook_query_reads = reads
    return reads


def revision_etag(revision: int, variant: str, records: int | None = None) -> str:
    stamp = f"r{revision}" if records is None else f"r{revision}.{records}"
    return f'W/"{stamp}-{variant}"'


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


def serve_at_revision(
    request: Request,
    revision: int,
    build: Callable[[], Response],
    *,
    records: int | None = None,
    reads: Collection[str] | None = None,
) -> Response:
    """A page or JSON body that changes only with the catalog revision (and with the
    records revision, when `records` gives the one read before its rows): a 304 for its
    current ETag, else the body rendered earlier at these revisions, else `build()` (kept
    when it is a 200). `reads`: the query parameters the page reads, when its route does
    not declare them all."""
    variant = response_variant(request.url.path, request.headers)
    etag = revision_etag(revision, variant, records)
    if etag in request.headers.get("if-none-match", ""):
        return not_modified(etag)
    cache: PageCache = request.app.state.page_cache
    read = frozenset(reads) - {LANGUAGE_QUERY} if reads is not None else None
    if read is None:
        read = route_reads(request.scope.get("route"))
    key = cache_key(request.url, read)
    at = Revisions(revision, records or 0)
    cached = cache.get(variant, key, at)
    if cached is None:
        with cache.one_build_at_a_time(variant, key):
            cached = cache.get(variant, key, at)  # built while this request waited
            if cached is None:
                request.state.page_url = URL(key)  # what its links say (app.templating)
                response = build()
                if response.status_code != 200:
                    return response
                media_type = response.media_type or "text/html"
                route = request.scope.get("route")
                cached = CachedBody(revision, records, bytes(response.body), media_type, route)
                cache.put(variant, key, cached, request.url.path, read)
    return cached_response(etag, cached)


class CachedAtRevision:
    """Answer a revision-cached URL before routing: a 304 when the client's ETag is current,
    the kept body when one was rendered at the current revisions; anything else goes on to
    the app, which answers in full.

    The revisions are read only for a request that can be answered here (it sends one of
    these ETags back, or its URL has a kept body): static files and other pages pay nothing.
    Inside the language middleware: the ETag and the kept body name the reader's language.
    """

    def __init__(self, app: ASGIApp, cache: PageCache) -> None:
        self.app = app
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        read_revisions = scope.get("state", {}).get("read_revisions")
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD") or not read_revisions:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        tags = headers.get("if-none-match", "")
        variant = response_variant(scope["path"], headers)
        key = self.cache.key_for(scope)
        known = key is not None and self.cache.knows(variant, key)
        if not (known or REVISION_TAG.search(tags)):
            await self.app(scope, receive, send)
            return
        give_way_to_a_write(scope)
        glance = scope["state"].get("glance_revisions")
        revisions = glance() if glance is not None else None
        if revisions is None:
            limiter = scope["state"].get("revision_reads_at_once")
            revisions = await anyio.to_thread.run_sync(read_revisions, limiter=limiter)
        cached = self.cache.get(variant, key, revisions) if known and key else None
        if cached is not None:
            scope["route"] = cached.route
        # A page's tag names the revisions it depends on: the current one of either kind.
        current = (
            revision_etag(revisions.catalog, variant),
            revision_etag(revisions.catalog, variant, revisions.records),
        )
        matched = next((etag for etag in current if etag in tags), None)
        if matched is not None:
            await not_modified(matched)(scope, receive, send)
        elif cached is not None:
            await cached_response(cached.etag(variant), cached)(scope, receive, send)
        else:
            await self.app(scope, receive, send)
