"""Rendering helpers: one URL serves a page or its htmx fragment."""

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from fastapi import Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from jinja2_fragments.fastapi import Jinja2Blocks
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from app.config import PROJECT_ROOT
from app.errors import ERROR_DESCRIPTIONS, page_title
from app.i18n import current_locale
from app.templating import register_filters

templates = Jinja2Blocks(directory=str(PROJECT_ROOT / "templates"))
register_filters(templates.env)

# Row ids are INTEGER columns, 32 bits on PostgreSQL (64 on SQLite): an id outside
# 1..2^31-1 can name nothing on either, so it is a 422 from validation rather than an
# overflow in the database driver.
MAX_ROW_ID = 2**31 - 1
RowIdPath = Annotated[int, Path(ge=1, le=MAX_ROW_ID, description="a stored id")]
RowIdQuery = Annotated[int, Query(ge=1, le=MAX_ROW_ID, description="a stored record id")]

# A page answers HTML; a client that asks for JSON (Accept) gets its errors as JSON.
HTML_CONTENT = {"text/html": {"schema": {"type": "string"}}}
PAGE_DESCRIPTIONS = {
    **ERROR_DESCRIPTIONS,
    303: "done: see Location",
    422: "invalid input: the form again with every error beside its field",
}


def page_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for a page's other answers."""
    content = {**HTML_CONTENT, "application/json": {"schema": {"type": "object"}}}
    return {
        code: {"description": PAGE_DESCRIPTIONS[code], "content": {} if code == 303 else content}
        for code in codes
    }


def is_htmx(request: Request) -> bool:
    """An htmx request that wants a fragment (history restores want the whole page)."""
    headers = request.headers
    return (
        headers.get("HX-Request") == "true" and headers.get("HX-History-Restore-Request") != "true"
    )


def render(
    request: Request,
    template: str,
    context: dict[str, Any],
    *,
    block: str | None = None,
    status_code: int = 200,
) -> Response:
    """Render the full page, or only `block` when htmx asks for a fragment."""
    block_name = block if block and is_htmx(request) else None
    response = templates.TemplateResponse(
        request, template, context, status_code=status_code, block_name=block_name
    )
    response.headers["Vary"] = "HX-Request"
    return response


def error_page(
    request: Request, message: str, status_code: int, headers: dict[str, str] | None = None
) -> Response:
    """A refusal as a page: its title for the status, its sentence as the heading."""
    context = {"message": message, "title": page_title(status_code)}
    return templates.TemplateResponse(
        request, "error.html", context, status_code=status_code, headers=headers
    )


def redirect(request: Request, url: str) -> Response:
    """HX-Redirect for htmx, 303 otherwise."""
    if is_htmx(request):
        return Response(status_code=200, headers={"HX-Redirect": url})
    return RedirectResponse(url, status_code=303)


# ---------------------------------------------------------------- pages cached per revision


class PageCache:
    """Rendered bodies by (revision, variant, URL); the oldest go first past `size`."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self.bodies: OrderedDict[tuple, tuple[bytes, str]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple) -> tuple[bytes, str] | None:
        with self.lock:
            found = self.bodies.get(key)
            if found is not None:
                self.bodies.move_to_end(key)
            return found

    def put(self, key: tuple, body: bytes, media_type: str) -> None:
        with self.lock:
            self.bodies[key] = (body, media_type)
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


def not_modified(etag: str) -> Response:
    headers = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "HX-Request"}
    return Response(status_code=304, headers=headers)


def serve_at_revision(request: Request, revision: int, build: Callable[[], Response]) -> Response:
    """A page or JSON body that changes only with the catalog revision.

    `If-None-Match` with the current ETag gets a 304 before anything is built; otherwise a
    body rendered earlier at this revision is reused. Clients revalidate every time
    (`no-cache`), so a change shows on the next request.
    """
    variant = response_variant(request.url.path, request.headers)
    etag = revision_etag(revision, variant)
    headers = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "HX-Request"}
    if etag in request.headers.get("if-none-match", ""):
        return not_modified(etag)
    cache: PageCache = request.app.state.page_cache
    key = (revision, variant, str(request.url))
    cached = cache.get(key)
    if cached is None:
        response = build()
        if response.status_code != 200:
            return response
        cached = (bytes(response.body), response.media_type or "text/html")
        cache.put(key, *cached)
    body, media_type = cached
    return Response(body, media_type=media_type, headers=headers)


class RevisionNotModified:
    """Answer a revalidation of a revision-cached body before routing, as cheaply as a
    static file: one read of the revision (the lifespan's `read_revision`, on a pooled
    connection), off the event loop.

    Only bodies served by `serve_at_revision` carry these ETags, so a request that sends one
    back asks for such a URL; anything else goes on to the app, which answers in full.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            headers = Headers(scope=scope)
            tags = headers.get("if-none-match", "")
            read_revision = scope.get("state", {}).get("read_revision")
            if REVISION_TAG.search(tags) and read_revision is not None:
                revision = await anyio.to_thread.run_sync(read_revision)
                etag = revision_etag(revision, response_variant(scope["path"], headers))
                if etag in tags:
                    await not_modified(etag)(scope, receive, send)
                    return
        await self.app(scope, receive, send)


REVISION_TAG = re.compile(r'W/"r\d+-[\w-]+"')
