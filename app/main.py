"""Application factory: the lifespan owns the engine and the session factory."""

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.staticfiles import PathLike
from starlette.types import Scope

from app.benchmarks.routes import api_router as benchmark_api
from app.benchmarks.routes import router as benchmark_pages
from app.benchmarks.worker import InProcessWorker
from app.catalog.revision import current_revision_on
from app.catalog.routes import api_router as catalog_api
from app.catalog.routes import router as catalog_pages
from app.config import PROJECT_ROOT, Settings, get_settings
from app.db import make_engine, make_sessionmaker
from app.errors import ServebookError
from app.recipes.routes import api_router as recipes_api
from app.recipes.routes import router as recipes_pages
from app.records.routes import api_router as records_api
from app.records.routes import router as records_pages
from app.records.validation import RecordInvalid
from app.resolve.cache import RecipeCache
from app.security import (
    LOOPBACK_HOST_NAMES,
    AuthRequired,
    BodyLimitMiddleware,
    CsrfCookieMiddleware,
    auth_required_response,
    auth_router,
    check_exposure,
    is_exposed,
    load_secret_key,
    register_template_globals,
)
from app.security.http import prefers_json
from app.web import PageCache, RevisionNotModified, templates

register_template_globals(templates.env)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app from settings; tests pass their own."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        engine = make_engine(settings)
        sessions = make_sessionmaker(engine)
        with sessions() as session:
            check_exposure(settings, session)
        worker = None
        if settings.run_worker:
            worker = InProcessWorker(sessions, _app.state.bench_api_keys).start()
        recipes = RecipeCache(sessions)

        def read_revision() -> int:
            with engine.connect() as connection:
                return current_revision_on(connection)

        yield {
            "read_revision": read_revision,
            "settings": settings,
            "engine": engine,
            "sessionmaker": sessions,
            "recipe_cache": recipes,
        }
        if worker is not None:
            worker.stop()
        engine.dispose()

    app = FastAPI(title="servebook", version="0.1.0", lifespan=lifespan)
    app.state.bench_api_keys = {}  # job id -> key, memory only, for the in-process worker
    app.state.page_cache = PageCache()
    app.mount("/static", CachedStaticFiles(directory=PROJECT_ROOT / "static"), name="static")
    app.include_router(catalog_pages)
    app.include_router(catalog_api)
    app.include_router(recipes_pages)
    app.include_router(recipes_api)
    app.include_router(records_pages)
    app.include_router(records_api)
    app.include_router(benchmark_pages)
    app.include_router(benchmark_api)
    app.include_router(auth_router)
    app.add_exception_handler(ServebookError, _render_error)
    app.add_exception_handler(RecordInvalid, _render_invalid)
    app.add_exception_handler(AuthRequired, auth_required_response)
    app.add_middleware(CsrfCookieMiddleware)
    app.add_middleware(BodyLimitMiddleware, limit=settings.max_upload_bytes)
    app.add_middleware(RevisionNotModified)
    if not is_exposed(settings):
        # On loopback the local user is the maintainer, so refuse requests that name
        # another host: a web page that rebinds its domain to 127.0.0.1 gets nothing.
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=LOOPBACK_HOST_NAMES)
    app.state.settings = settings
    app.state.secret_key = load_secret_key(settings)
    return app



class CachedStaticFiles(StaticFiles):
    """Vendored files carry their version in their name and never change: browsers keep
    them a year. The app's own CSS and JS revalidate (ETag and Last-Modified)."""

    def file_response(
        self, full_path: PathLike, stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        if "/vendor/" in scope["path"]:
            response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        else:
            response.headers["Cache-Control"] = "no-cache"
        return response


async def _render_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServebookError)
    if prefers_json(request):
        return JSONResponse({"detail": exc.message}, status_code=exc.status_code)
    return templates.TemplateResponse(
        request, "error.html", {"message": exc.message}, status_code=exc.status_code
    )


async def _render_invalid(request: Request, exc: Exception) -> Response:
    """Every field error at once, as the record API documents it."""
    assert isinstance(exc, RecordInvalid)
    if prefers_json(request):
        errors = [error.model_dump() for error in exc.errors]
        return JSONResponse({"errors": errors}, status_code=422)
    return await _render_error(request, exc)
