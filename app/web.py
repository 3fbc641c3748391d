"""Rendering helpers: one URL serves a page or its htmx fragment."""

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
