"""Application factory: the lifespan owns the engine and the session factory."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from anyio import CapacityLimiter
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from starlette.routing import Match
from starlette.types import Scope

from app import job_kinds  # noqa: F401 - the in-process worker runs every kind
from app.accuracy.routes import api_router as accuracy_api
from app.accuracy.routes import router as accuracy_pages
from app.api_docs import router as api_docs
from app.bench.quality.answer_schema import answer_schema_components, state_answer_schemas
from app.calibrate.routes import router as calibrate_pages
from app.calibrate.routes import worker_api as calibrate_worker_api
from app.catalog.revision import Revisions, SqliteRevisionGlance, current_revisions_on
from app.catalog.routes import api_router as catalog_api
from app.catalog.routes import router as catalog_pages
from app.config import Settings, get_settings
from app.db import make_engine, make_sessionmaker, sqlite_write_lock_free
from app.errors import METHOD_NOT_ALLOWED, NO_SUCH_PAGE, ServebookError, refusal_status
from app.i18n import LocaleMiddleware
from app.i18n.sentences import english, json_params, render
from app.i18n.validation_words import (
    MAX_ERRORS,
    MAX_MESSAGE,
    MORE_ERRORS,
    clipped,
    said_by_pydantic,
)
from app.jobs.routes import api_router as benchmark_api
from app.jobs.routes import router as benchmark_pages
from app.jobs.worker import InProcessWorker
from app.jobs.worker_routes import api_router as worker_api
from app.observability import (
    RequestMetrics,
    RequestMetricsMiddleware,
    health_router,
    metrics_router,
)
from app.observability.runtime import time_pauses
from app.page_cache import CachedAtRevision, PageCache
from app.plan.routes import api_router as plan_api
from app.plan.routes import router as plan_pages
from app.recipes.home import router as home_page
from app.recipes.routes import api_router as recipes_api
from app.recipes.routes import router as recipes_pages
from app.records.endpoints.api import api_router as records_api
from app.records.endpoints.api import submit_api
from app.records.endpoints.routes import router as records_pages
from app.records.endpoints.submission_process import SubmissionProcess, in_its_own_process
from app.records.schemas import ErrorsOut, FieldError
from app.records.storage.validation import RecordInvalid
from app.resolve.cache import RecipeCache
from app.resources import STATIC_DIR
from app.security import (
    AuthRequired,
    BodyLimitMiddleware,
    CsrfCookieMiddleware,
    ForwardedClientMiddleware,
    SecurityHeadersMiddleware,
    allowed_host_names,
    auth_required_response,
    auth_router,
    check_exposure,
    load_secret_key,
    register_template_globals,
)
from app.security.body_limit import PayloadTooLarge, too_large_response
from app.security.exposure import AnsweredHostsMiddleware
from app.security.headers import server_error
from app.security.http import prefers_json
from app.security.json_input_schema import free_form_components, state_free_forms
from app.security.no_nul import NulRefusedMiddleware
from app.security.rate_limit import WriteRateLimitMiddleware
from app.sentinel.routes import api_router as sentinel_api
from app.sentinel.routes import router as sentinel_pages
from app.static_files import CachedStaticFiles
from app.tasks.routes import api_router as tasks_api
from app.tasks.routes import router as task_pages
from app.warm_up import start_warm_up
from app.web import error_page, templates

register_template_globals(templates.env)

# Submissions, and the revision reads of cached pages, each run in worker threads at most
# this many at a time per process, each on a pool of their own of as many connections.
SUBMISSIONS_AT_ONCE = 4
REVISION_READS_AT_ONCE = 4


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app from settings; tests pass their own."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        time_pauses()
        engine = make_engine(settings)
        sessions = make_sessionmaker(engine)
        with sessions() as session:
            check_exposure(settings, session)
        worker = None
        if settings.run_worker:
            worker = InProcessWorker(
                sessions, _app.state.bench_api_keys, settings.worker_hosts(None)
            ).start()
        recipes = RecipeCache(sessions)
        _app.state.recipe_cache = recipes  # what the warm-up fills, for whoever checks it
        _app.state.warm_up = (
            start_warm_up(sessions, recipes, _app, settings.gc_thresholds)
            if settings.warm_up
            else None
        )

        # Writes beside reads: submissions and the revision reads of cached pages each
        # have a pool of their own, kept open, as large as the number that run at once.
        # On one shared pool, 16 readers of cached pages took every pooled connection and
        # opened and closed one per request past the pool's size (measured: 180 in 4 s),
        # and a submission waited behind them for a connection, or opened one itself.
        revision_engine = make_engine(settings, REVISION_READS_AT_ONCE)
        write_engine = make_engine(settings, SUBMISSIONS_AT_ONCE)

        def read_revisions() -> Revisions:
            with revision_engine.connect() as connection:
                return current_revisions_on(connection)

        # On a SQLite file, read on the event loop first (a worker thread when it is busy).
        sqlite_path = settings.sqlite_path
        glance = SqliteRevisionGlance(str(sqlite_path)) if sqlite_path else None
        if glance is not None:
            glance()  # its connection opened now, before the first page waits for it
        _app.state.revision_glance = glance
        own = in_its_own_process(settings)
        submissions = SubmissionProcess(settings, create_app, submit_api) if own else None
        _app.state.submission_process = submissions  # for whoever checks on it

        yield {
            # Record submissions, checked and written in a process of their own once it is
            # ready (app.records.endpoints.submission_process); None: in this one.
            "submission_process": submissions,
            # Submissions run in worker threads at most this many at a time per process:
            # records are written one at a time on SQLite, and through the few pooled
            # connections on PostgreSQL, so more threads only take turns at the GIL.
            "submissions_at_once": CapacityLimiter(SUBMISSIONS_AT_ONCE),
            "write_sessions": make_sessionmaker(write_engine),
            "read_revisions": read_revisions,
            "glance_revisions": glance,
            # Reads answered on the event loop give way to a write (app.write_priority).
            "sqlite_write_lock_free": (
                sqlite_write_lock_free(write_engine) if settings.is_sqlite else None
            ),
            "revision_reads_at_once": CapacityLimiter(REVISION_READS_AT_ONCE),
            "settings": settings,
            "engine": engine,
            "sessionmaker": sessions,
            "recipe_cache": recipes,
        }
        if submissions is not None:
            await submissions.stop()
        if worker is not None:
            worker.stop()
        for pooled in (engine, revision_engine, write_engine):
            pooled.dispose()
        if glance is not None:
            glance.close()

    # The API docs are served from the vendored Swagger UI (app.api_docs), not a CDN, and
    # the OpenAPI document with the catalog stated in it.
    app = FastAPI(
        title="servebook",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.bench_api_keys = {}  # job id -> key, memory only, for the in-process worker
    app.state.page_cache = PageCache()
    # Routes are tried in order: the record API, the busiest (clients submitting results),
    # comes first. Its paths all start /api/records, which no other router serves, so it
    # shadows nothing.
    app.include_router(records_api)
    app.mount("/static", CachedStaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(home_page)
    app.include_router(catalog_pages)
    app.include_router(catalog_api)
    app.include_router(recipes_pages)
    app.include_router(recipes_api)
    app.include_router(plan_pages)
    app.include_router(plan_api)
    app.include_router(records_pages)
    app.include_router(accuracy_pages)
    app.include_router(accuracy_api)
    app.include_router(benchmark_pages)
    app.include_router(benchmark_api)
    app.include_router(sentinel_pages)
    app.include_router(sentinel_api)
    app.include_router(worker_api)
    app.include_router(calibrate_pages)
    app.include_router(calibrate_worker_api)
    app.include_router(tasks_api)
    app.include_router(task_pages)
    app.include_router(auth_router)
    app.include_router(health_router)
    app.include_router(metrics_router)
    app.include_router(api_docs)
    app.add_exception_handler(ServebookError, _render_error)
    app.add_exception_handler(RecordInvalid, _render_invalid)
    app.add_exception_handler(AuthRequired, auth_required_response)
    app.add_exception_handler(405, _method_not_allowed)
    app.add_exception_handler(404, _not_found)
    app.add_exception_handler(PayloadTooLarge, _too_large)
    app.add_exception_handler(RequestValidationError, _render_request_invalid)
    app.add_exception_handler(Exception, server_error)  # a 500 carries the security headers too
    app.openapi = lambda: _openapi_with_one_error_shape(app)  # type: ignore[method-assign]
    # Innermost: a page kept at the current revision is answered before routing, in the
    # reader's language (read outside).
    app.add_middleware(CachedAtRevision, cache=app.state.page_cache)
    app.add_middleware(CsrfCookieMiddleware)
    app.add_middleware(NulRefusedMiddleware)  # inside the size limit: reads bounded bodies
    app.add_middleware(BodyLimitMiddleware, limit=settings.max_upload_bytes)
    # Before a write's body is read: a client past its allowance gets 429 and Retry-After.
    app.add_middleware(WriteRateLimitMiddleware, per_minute=settings.write_rate_per_minute)
    app.add_middleware(LocaleMiddleware)
    # Refuse requests that name a host the settings do not list: on loopback a web page
    # that rebinds its domain to 127.0.0.1 gets nothing, and exposed, links and API url
    # fields only ever carry an allowed name.
    app.add_middleware(AnsweredHostsMiddleware, allowed_hosts=allowed_host_names(settings))
    app.add_middleware(SecurityHeadersMiddleware)  # every response carries them
    # The client and scheme a trusted proxy forwarded, before anything reads either.
    app.add_middleware(ForwardedClientMiddleware, trusted=settings.trusted_proxies)
    # Outermost, so refused hosts and oversize bodies are counted with their status too.
    app.state.request_metrics = RequestMetrics()
    app.add_middleware(RequestMetricsMiddleware, metrics=app.state.request_metrics)
    app.state.settings = settings
    app.state.secret_key = load_secret_key(settings)
    return app


async def _render_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServebookError)
    if prefers_json(request):
        return JSONResponse(exc.json_body(), status_code=exc.status_code)
    return error_page(request, exc.text(), exc.status_code)


async def _method_not_allowed(request: Request, exc: Exception) -> Response:
    """405 with every method the path answers, not only those of the first route matched."""
    allowed = allowed_methods(request.app, request.scope)
    said = METHOD_NOT_ALLOWED(method=request.method, allowed=allowed)
    headers = {"Allow": ", ".join(allowed)}
    if prefers_json(request):
        body = {"detail": english(said), **said.as_json()}
        return JSONResponse(body, status_code=405, headers=headers)
    return error_page(request, render(said), 405, headers)


async def _too_large(request: Request, exc: Exception) -> Response:
    """A body that outgrew the limit while streaming: answered as one sent too large."""
    assert isinstance(exc, PayloadTooLarge)
    return too_large_response(request, exc.said)


async def _not_found(request: Request, exc: Exception) -> Response:
    """An address no route serves: JSON as FastAPI words it, a page in the reader's language."""
    if prefers_json(request):
        return JSONResponse({"detail": "Not Found"}, status_code=404)
    return error_page(request, render(NO_SUCH_PAGE()), 404)


HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def allowed_methods(app: FastAPI, scope: Scope) -> list[str]:
    """The methods some route answers fully at this path."""
    return [
        method
        for method in HTTP_METHODS
        if any(
            route.matches({**scope, "method": method})[0] is Match.FULL
            for route in app.router.routes
        )
    ]


async def _render_request_invalid(request: Request, exc: Exception) -> Response:
    """Invalid path, query or body parameters: the same `{"errors": [...]}` as every other
    422, each naming its field."""
    assert isinstance(exc, RequestValidationError)
    refused_field = getattr(request.state, "refused_json_field", None)
    found = exc.errors()
    errors = [field_error(error, refused_field) for error in found[:MAX_ERRORS]]
    if len(found) > MAX_ERRORS:
        said = MORE_ERRORS(more=len(found) - MAX_ERRORS, listed=MAX_ERRORS)
        errors.append(FieldError.of("body", said))
    body = {"errors": [e.model_dump(exclude_none=True) for e in errors]}
    # 409 where the fields only contradict each other (app.errors.FIELD_CONFLICTS)
    return JSONResponse(body, status_code=refusal_status(e.code for e in errors))


def field_error(error: dict[str, Any], refused_field: str | None = None) -> FieldError:
    if error["type"] == "json_invalid":  # the body, refused by the strict JSON parser
        return FieldError(
            field=refused_field or "body", message=str(error.get("ctx", {}).get("error", ""))
        )
    path = ".".join(str(part) for part in error["loc"][1:]) or str(error["loc"][0])
    message = str(error["msg"]).removeprefix("Value error, ")
    said = said_by_pydantic(error)
    return FieldError(
        field=clipped(path),
        message=clipped(message, MAX_MESSAGE),
        code=said.code if said else None,
        params=json_params(said.params) if said else None,
    )


def _openapi_with_one_error_shape(app: FastAPI) -> dict[str, Any]:
    """FastAPI documents its own validation-error body; this app answers ErrorsOut."""
    if app.openapi_schema is None:
        schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        errors_out = ErrorsOut.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(errors_out.pop("$defs", {}))
        components["HTTPValidationError"] = errors_out
        components.pop("ValidationError", None)
        components.update(free_form_components())
        state_free_forms(schema)
        components.update(answer_schema_components())
        state_answer_schemas(schema)
        app.openapi_schema = schema
    return app.openapi_schema


async def _render_invalid(request: Request, exc: Exception) -> Response:
    """Every field error at once, as the record API documents it."""
    assert isinstance(exc, RecordInvalid)
    if prefers_json(request):
        errors = [error.model_dump(exclude_none=True) for error in exc.errors]
        return JSONResponse({"errors": errors}, status_code=exc.status_code)
    return await _render_error(request, exc)
