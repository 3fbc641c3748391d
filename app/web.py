"""Rendering helpers: one URL serves a page or its htmx fragment."""

from typing import Annotated, Any

from fastapi import Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from jinja2_fragments.fastapi import Jinja2Blocks

from app.errors import ERROR_DESCRIPTIONS, page_title
from app.resources import TEMPLATES_DIR
from app.templating import register_filters

templates = Jinja2Blocks(directory=str(TEMPLATES_DIR))
register_filters(templates.env)
# A price per GPU-hour the reader types lives in this cookie, in their browser only: pages
# that cost something read it, and nothing stores it on the server.
PRICE_COOKIE = "servebook_gpu_price"
templates.env.globals["price_cookie"] = PRICE_COOKIE

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
