"""Liveness and readiness, for a load balancer or an orchestrator."""

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError

from app.observability.queries import database_revisions, migration_heads

health_router = APIRouter(tags=["operations"])


@health_router.get("/healthz", include_in_schema=False)
async def healthz() -> dict[str, str]:
    """The process is up; the database is not consulted."""
    return {"status": "ok"}


@health_router.get("/readyz", include_in_schema=False)
def readyz(request: Request) -> JSONResponse:
    """Ready when the database answers and its schema is at the newest migration."""
    reason = not_ready_reason(request)
    if reason:
        return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
    return JSONResponse({"status": "ok"})


def not_ready_reason(request: Request) -> str | None:
    heads = migration_heads()
    try:
        with request.state.engine.connect() as connection:
            current = database_revisions(connection)
    except SQLAlchemyError as error:
        return f"database unreachable: {type(error.orig or error).__name__}"
    if current != heads:
        at = ", ".join(sorted(current)) or "no revision"
        return (
            f"database schema at {at}, code expects {', '.join(sorted(heads))}: "
            "run `servebook db upgrade`"
        )
    return None
