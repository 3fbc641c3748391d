"""The API docs (/docs): Swagger UI from the vendored copy under /static, so the page works
with no network and under the Content-Security-Policy (its inline start-up script runs by
nonce). The OpenAPI document it shows is served here, with the catalog stated in it
(app.catalog.openapi). The favicon lives here too: browsers ask for /favicon.ico on every
site."""

import secrets

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from app.bench.transport.url_schema import state_bench_urls
from app.catalog.openapi import stated_catalog
from app.catalog.references import catalog_references
from app.db import SessionDep
from app.security.headers import DOCS_PATH, docs_policy

SWAGGER_UI_VERSION = "5.35.0"  # static/vendor/README.md
router = APIRouter(include_in_schema=False)


OPENAPI_PATH = "/openapi.json"


@router.get(OPENAPI_PATH, name="api:openapi")
def openapi(request: Request, session: SessionDep) -> Response:
    """The API's schema, the slugs the catalog holds listed where a body names a catalog
    row; built again when the catalog changes. Stored rows people add and delete (tasks)
    are integers, checked when a request names one."""
    catalog = catalog_references(session)
    key = catalog.definition
    held = getattr(request.app.state, "stated_openapi", None)
    if held is None or held[0] != key:
        document = stated_catalog(request.app.openapi(), catalog)
        settings = request.app.state.settings
        state_bench_urls(document, settings.bench_allowed_hosts, settings.bench_worker_hosts)
        held = (key, document)
        request.app.state.stated_openapi = held
    return JSONResponse(held[1])


@router.get(DOCS_PATH, name="api:docs")
def docs(request: Request) -> Response:
    page = get_swagger_ui_html(
        openapi_url=str(request.app.url_path_for("api:openapi")),
        title=f"{request.app.title} · API",
        swagger_js_url=static(request, f"vendor/swagger-ui-bundle-{SWAGGER_UI_VERSION}.js"),
        swagger_css_url=static(request, f"vendor/swagger-ui-{SWAGGER_UI_VERSION}.css"),
        swagger_favicon_url=static(request, "favicon.svg"),
    )
    nonce = secrets.token_urlsafe(16)
    # The page's only inline script is the one tag without attributes.
    html = bytes(page.body).decode().replace("<script>", f'<script nonce="{nonce}">')
    return HTMLResponse(
        html, headers={"Content-Security-Policy": docs_policy(nonce), "Cache-Control": "no-store"}
    )


@router.get("/favicon.ico", name="favicon")
def favicon(request: Request) -> Response:
    return RedirectResponse(static(request, "favicon.svg"), status_code=301)


def static(request: Request, path: str) -> str:
    return str(request.app.url_path_for("static", path=path))
