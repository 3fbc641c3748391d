"""The sign-in pages, and where an unauthenticated caller is sent."""

import logging
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.datastructures import URL, FormData

from app.db import SessionDep
from app.errors import ServebookError
from app.i18n.catalogs import gettext as _
from app.security.csrf import CsrfDep
from app.security.http import SAFE_METHODS, prefers_json
from app.security.principal import (
    OptionalPrincipal,
    cookie_session,
    sign_in_cookie,
    sign_out_cookie,
)
from app.security.tokens import authenticate, end_session, start_session
from app.web import page_responses, redirect, render

log = logging.getLogger("servebook.security")

auth_router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)


async def form_data(request: Request) -> FormData:
    return await request.form()


FormDep = Annotated[FormData, Depends(form_data)]


def local_path(target: str | None) -> str:
    """Only same-site paths, so the sign-in form cannot be used to redirect elsewhere."""
    if target and target.startswith("/") and not target.startswith(("//", "/\\")):
        return target
    return "/"


@auth_router.get("/signin", name="security:signin")
def signin_page(request: Request, principal: OptionalPrincipal, next: str = "/") -> Response:
    """Paste an access token to submit or review from this browser."""
    context = {"principal": principal, "next": local_path(next), "error": None}
    return render(request, "security/signin.html", context)


@auth_router.post(
    "/signin",
    name="security:signin_submit",
    dependencies=[CsrfDep],
    responses=page_responses(303, 401, 403),
)
def signin(request: Request, session: SessionDep, form: FormDep) -> Response:
    """Check the token; start a session whose id (not the token) a signed, httponly cookie
    keeps."""
    token = str(form.get("token") or "").strip()
    target = local_path(str(form.get("next") or "/"))
    record = authenticate(session, token) if token else None
    if record is None:
        error = _("That token is unknown or revoked.")
        context = {"principal": None, "next": target, "error": error}
        return render(request, "security/signin.html", context, status_code=401)
    log.info("signed in as %r (%s)", record.name, record.role)
    response = redirect(request, target)
    sign_in_cookie(request, response, start_session(session, record))
    return response


@auth_router.post(
    "/signout", name="security:signout", dependencies=[CsrfDep], responses=page_responses(303, 403)
)
def signout(request: Request, session: SessionDep) -> Response:
    """End this browser's session."""
    session_id = cookie_session(request)
    if session_id:
        end_session(session, session_id)
    response = redirect(request, str(request.url_for("catalog:index")))
    sign_out_cookie(response)
    return response


def auth_required_response(request: Request, exc: Exception) -> Response:
    """JSON asks for a Bearer token; a page goes to the sign-in form and comes back."""
    assert isinstance(exc, ServebookError)
    if prefers_json(request):
        return JSONResponse(
            exc.json_body(), status_code=401, headers={"WWW-Authenticate": "Bearer"}
        )
    back = (
        URL(request.headers.get("referer", ""))
        if request.method not in SAFE_METHODS
        else request.url
    )
    target = local_path(back.path + (f"?{back.query}" if back.query else ""))
    url = request.url_for("security:signin").include_query_params(next=target)
    return redirect(request, str(url))
