"""Application factory: the lifespan owns the engine and the session factory."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from app.catalog.routes import api_router as catalog_api
from app.catalog.routes import router as catalog_pages
from app.config import PROJECT_ROOT, Settings, get_settings
from app.db import make_engine, make_sessionmaker
from app.errors import ServebookError
from app.recipes.routes import api_router as recipes_api
from app.recipes.routes import router as recipes_pages
from app.records.routes import api_router as records_api
from app.records.routes import router as records_pages
from app.web import templates


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app from settings; tests pass their own."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        engine = make_engine(settings)
        yield {"settings": settings, "engine": engine, "sessionmaker": make_sessionmaker(engine)}
        engine.dispose()

    app = FastAPI(title="servebook", version="0.1.0", lifespan=lifespan)
    app.mount("/static", StaticFiles(directory=PROJECT_ROOT / "static"), name="static")
    app.include_router(catalog_pages)
    app.include_router(catalog_api)
    app.include_router(recipes_pages)
    app.include_router(recipes_api)
    app.include_router(records_pages)
    app.include_router(records_api)
    app.add_exception_handler(ServebookError, _render_error)
    return app


def wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "application/json" in request.headers.get(
        "accept", ""
    )


async def _render_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServebookError)
    if wants_json(request):
        return JSONResponse({"detail": exc.message}, status_code=exc.status_code)
    return templates.TemplateResponse(
        request, "error.html", {"message": exc.message}, status_code=exc.status_code
    )
