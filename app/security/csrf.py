"""CSRF protection by signed double submit: a secret in a cookie, its signed form in the page."""

import hmac
import secrets
from typing import Any

from fastapi import Depends, Request
from fastapi.responses import Response
from itsdangerous import BadSignature
from jinja2 import Environment, pass_context
from markupsafe import Markup
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import Forbidden
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.security.http import SAFE_METHODS
from app.security.signing import signer

CSRF_COOKIE = "servebook_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
CSRF_MAX_AGE_S = 24 * 3600


class CsrfFailed(Forbidden):
    pass


CSRF_MISSING = register(
    "request.csrf_missing",
    _l("The form's security token is missing or out of date. Reload the page and submit again."),
)


def csrf_secret(request: Request) -> str:
    """This browser's CSRF secret, made (and set as a cookie on the way out) when missing."""
    current = request.cookies.get(CSRF_COOKIE) or getattr(request.state, "csrf_new_secret", None)
    if current:
        return current
    fresh = secrets.token_urlsafe(32)
    request.state.csrf_new_secret = fresh
    return fresh


def csrf_token(request: Request) -> str:
    return str(signer(request, "csrf").dumps(csrf_secret(request)))


def csrf_matches(request: Request, submitted: str | None) -> bool:
    secret = request.cookies.get(CSRF_COOKIE)
    if not secret or not submitted:
        return False
    try:
        expected = signer(request, "csrf").loads(submitted, max_age=CSRF_MAX_AGE_S)
    except BadSignature:
        return False
    return hmac.compare_digest(str(expected), secret)


async def verify_csrf(request: Request) -> None:
    """Reject an unsafe request whose form field or header lacks this browser's CSRF token."""
    if request.method in SAFE_METHODS:
        return
    submitted = request.headers.get(CSRF_HEADER)
    content_type = request.headers.get("content-type", "")
    if submitted is None and content_type.startswith(("multipart/", "application/x-www-form")):
        value = (await request.form()).get(CSRF_FIELD)
        submitted = value if isinstance(value, str) else None
    if not csrf_matches(request, submitted):
        raise CsrfFailed(CSRF_MISSING())


CsrfDep = Depends(verify_csrf)


@pass_context
def csrf_input(context: dict[str, Any]) -> Markup:
    """A hidden form field with this browser's CSRF token (use inside every POST form)."""
    token = csrf_token(context["request"])
    return Markup('<input type="hidden" name="{}" value="{}">').format(CSRF_FIELD, token)


@pass_context
def csrf_token_global(context: dict[str, Any]) -> str:
    """The bare token, e.g. for hx-headers='{"X-CSRF-Token": "..."}'."""
    return csrf_token(context["request"])


def register_template_globals(env: Environment) -> None:
    env.globals.update(csrf_input=csrf_input, csrf_token=csrf_token_global)


class CsrfCookieMiddleware:
    """Set the CSRF cookie when a response rendered a token for a browser that had none."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_cookie(message: Message) -> None:
            fresh = scope.get("state", {}).get("csrf_new_secret")
            if message["type"] == "http.response.start" and fresh:
                response = Response()
                response.set_cookie(
                    CSRF_COOKIE,
                    fresh,
                    httponly=True,
                    samesite="lax",
                    secure=scope.get("scheme") == "https",
                )
                headers = MutableHeaders(scope=message)
                headers.append("set-cookie", response.headers["set-cookie"])
            await send(message)

        await self.app(scope, receive, send_with_cookie)
