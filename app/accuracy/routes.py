"""/accuracy and GET /api/accuracy: per class, how right the estimate was."""

import msgspec
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.accuracy.figures import Accuracy, accuracy
from app.catalog.revision import current_revision
from app.db import SessionDep
from app.page_cache import serve_at_revision
from app.web import render

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
api_router = APIRouter(prefix="/api", tags=["accuracy"])


@router.get("/accuracy", name="accuracy:page")
def accuracy_page(request: Request, session: SessionDep) -> Response:
    """Per class of runtime and hardware: the shipped checks' and accepted records' figures,
    the range in effect, and how the figures moved across estimator versions."""
    revision = current_revision(session)
    asked = request.query_params.get("class")

    def build() -> Response:
        found = accuracy(session)
        chosen = next((c for c in found.classes if c.key == asked), None)
        return render(request, "accuracy/index.html", {"accuracy": found, "chosen": chosen})

    return serve_at_revision(request, revision, build, reads=("class",))


@api_router.get("/accuracy", name="api:accuracy", response_model=dict)
def accuracy_json(request: Request, session: SessionDep) -> Response:
    """The figures of `/accuracy` as JSON; labels in the reader's language."""
    revision = current_revision(session)

    def build() -> Response:
        return JSONResponse(_plain(accuracy(session)))

    return serve_at_revision(request, revision, build)


def _plain(found: Accuracy) -> dict:
    return msgspec.to_builtins(found)
