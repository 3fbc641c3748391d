"""Rendering helpers: one URL serves a page or its htmx fragment."""

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from fastapi import Request
from fastapi.responses import RedirectResponse, Response
from jinja2_fragments.fastapi import Jinja2Blocks

from app.config import PROJECT_ROOT
from app.templating import register_filters

templates = Jinja2Blocks(directory=str(PROJECT_ROOT / "templates"))
register_filters(templates.env)


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


def serve_at_revision(
    request: Request, revision: int, build: Callable[[], Response], *, variant: str = ""
) -> Response:
    """A page or JSON body that changes only with the catalog revision.

    `If-None-Match` with the current ETag gets a 304 before anything is built; otherwise a
    body rendered earlier at this revision is reused. Clients revalidate every time
    (`no-cache`), so a change shows on the next request.
    """
    variant = variant or ("fragment" if is_htmx(request) else "page")
    etag = revision_etag(revision, variant)
    headers = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "HX-Request"}
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
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
