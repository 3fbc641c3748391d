"""Who may do what: access tokens, the sign-in cookie, CSRF tokens and the body-size limit.

On a loopback host the local user is the maintainer. Served beyond loopback, submitting
needs a submitter or maintainer token and reviewing a maintainer token: a Bearer header
for the API, a signed httponly cookie (set by the sign-in form) for HTML pages.

Tokens are shown once when created; only their sha256 is stored, and no log line ever
carries one.
"""

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from datetime import UTC, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from itsdangerous import BadSignature, URLSafeTimedSerializer
from jinja2 import Environment, pass_context
from markupsafe import Markup
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from starlette.datastructures import URL, FormData, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import DEFAULT_DATA_DIR, Settings, is_loopback
from app.db import SessionDep, utcnow
from app.errors import Forbidden, ServebookError
from app.models import ApiToken
from app.web import redirect, render, templates

log = logging.getLogger("servebook.security")

Role = Literal["submitter", "maintainer"]
ROLES: tuple[Role, ...] = ("submitter", "maintainer")
TOKEN_PREFIX = "sb_"
AUTH_COOKIE = "servebook_auth"
CSRF_COOKIE = "servebook_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
CSRF_MAX_AGE_S = 24 * 3600
AUTH_MAX_AGE_S = 30 * 24 * 3600
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LAST_USED_RESOLUTION = timedelta(hours=1)
# Host headers a loopback-only app answers to ("testserver" is the in-process test client's).
LOOPBACK_HOST_NAMES = ["127.0.0.1", "localhost", "[::1]", "::1", "testserver"]


class AuthRequired(ServebookError):
    status_code = 401


class CsrfFailed(Forbidden):
    pass


class PayloadTooLarge(HTTPException):
    """Raised while streaming a body that outgrows the limit (no Content-Length given)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, too_large_message(limit))


class ExposedWithoutTokens(RuntimeError):
    pass


@dataclass(frozen=True)
class Principal:
    name: str
    role: Role
    via: Literal["loopback", "token"]

    @property
    def is_maintainer(self) -> bool:
        return self.role == "maintainer"


# ---------------------------------------------------------------- tokens and exposure


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class TokenRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def count_active(self) -> int:
        statement = select(func.count()).select_from(ApiToken).where(ApiToken.revoked_at.is_(None))
        return self.session.scalar(statement) or 0

    def by_hash(self, token_hash: str) -> ApiToken | None:
        statement = select(ApiToken).where(
            ApiToken.token_hash == token_hash, ApiToken.revoked_at.is_(None)
        )
        return self.session.scalars(statement).one_or_none()

    def add(self, name: str, role: Role, token_hash: str) -> ApiToken:
        token = ApiToken(name=name, role=role, token_hash=token_hash)
        self.session.add(token)
        self.session.flush()
        return token


def create_token(session: Session, name: str, role: Role) -> str:
    """Store a new token's hash and return the token itself, which is never stored."""
    if role not in ROLES:
        raise ValueError(f"role must be one of: {', '.join(ROLES)}")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    TokenRepository(session).add(name, role, hash_token(token))
    log.info("access token created for %r with role %s", name, role)
    return token


def is_exposed(settings: Settings) -> bool:
    return not is_loopback(settings.host)


def check_exposure(settings: Settings, session: Session) -> None:
    """Refuse to serve beyond loopback until at least one access token exists."""
    if is_exposed(settings) and TokenRepository(session).count_active() == 0:
        raise ExposedWithoutTokens(
            f"Refusing to serve on {settings.host}: no access token exists. Create one with "
            "`servebook token create --role maintainer --name NAME`, or serve on 127.0.0.1."
        )


def authenticate(session: Session, token: str) -> ApiToken | None:
    record = TokenRepository(session).by_hash(hash_token(token))
    if record is None:
        log.warning("rejected an unknown or revoked access token")
        return None
    now = utcnow()
    last = record.last_used_at
    # Writing on every request would serialise readers behind SQLite's one writer.
    if last is None or now - last.replace(tzinfo=UTC) > LAST_USED_RESOLUTION:
        record.last_used_at = now
    return record


# ---------------------------------------------------------------- signing key


def secret_key_path(settings: Settings) -> Path:
    folder = settings.sqlite_path.parent if settings.sqlite_path else DEFAULT_DATA_DIR
    return folder / "secret_key"


def load_secret_key(settings: Settings) -> str:
    """The configured key, else one generated once and kept beside the database."""
    if settings.secret_key:
        return settings.secret_key
    if settings.is_sqlite and settings.sqlite_path is None:
        return secrets.token_urlsafe(32)  # in-memory database: a key for this process
    path = secret_key_path(settings)
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(32)
    path.touch(mode=0o600)
    path.write_text(key)
    return key


def signer(request: Request, salt: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(request.app.state.secret_key, salt=salt)


# ---------------------------------------------------------------- principals


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def cookie_token(request: Request) -> str | None:
    raw = request.cookies.get(AUTH_COOKIE)
    if not raw:
        return None
    try:
        return str(signer(request, "auth").loads(raw, max_age=AUTH_MAX_AGE_S))
    except BadSignature:
        return None


def resolve_principal(request: Request, session: Session) -> Principal | None:
    """The caller, or None when an exposed app gets no valid token."""
    # The sign-in cookie is for pages; the JSON API takes only an explicit Bearer token.
    from_cookie = None if request.url.path.startswith("/api/") else cookie_token(request)
    token = bearer_token(request) or from_cookie
    record = authenticate(session, token) if token else None
    if token and record is None and bearer_token(request):
        raise AuthRequired("The access token is unknown or revoked.")
    if not is_exposed(request.app.state.settings):
        return Principal(record.name if record else "local", "maintainer", "loopback")
    if record is None:
        return None
    return Principal(record.name, record.role, "token")  # type: ignore[arg-type]


def optional_principal(request: Request, session: SessionDep) -> Principal | None:
    try:
        return resolve_principal(request, session)
    except AuthRequired:
        return None


def require_submitter(request: Request, session: SessionDep) -> Principal:
    principal = resolve_principal(request, session)
    if principal is None:
        raise AuthRequired("Submitting needs a submitter or maintainer access token.")
    return principal


def require_maintainer(request: Request, session: SessionDep) -> Principal:
    principal = resolve_principal(request, session)
    if principal is None:
        raise AuthRequired("Reviewing needs a maintainer access token.")
    if not principal.is_maintainer:
        raise Forbidden(f"'{principal.name}' is a {principal.role}; reviewing needs a maintainer.")
    return principal


OptionalPrincipal = Annotated[Principal | None, Depends(optional_principal)]
SubmitterDep = Annotated[Principal, Depends(require_submitter)]
MaintainerDep = Annotated[Principal, Depends(require_maintainer)]


def sign_in_cookie(request: Request, response: Response, token: str) -> None:
    value = signer(request, "auth").dumps(token)
    response.set_cookie(AUTH_COOKIE, value, max_age=AUTH_MAX_AGE_S, httponly=True,
                        samesite="lax", secure=request.url.scheme == "https")


def sign_out_cookie(response: Response) -> None:
    response.delete_cookie(AUTH_COOKIE, httponly=True, samesite="lax")


# ---------------------------------------------------------------- CSRF (signed double submit)


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
        raise CsrfFailed("The form's security token is missing or out of date. Reload the page "
                         "and submit again.")


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
                response.set_cookie(CSRF_COOKIE, fresh, httponly=True, samesite="lax",
                                    secure=scope.get("scheme") == "https")
                headers = MutableHeaders(scope=message)
                headers.append("set-cookie", response.headers["set-cookie"])
            await send(message)

        await self.app(scope, receive, send_with_cookie)


# ---------------------------------------------------------------- body size


def too_large_message(limit: int) -> str:
    return (f"The request body is larger than the {limit:,}-byte limit "
            "(SERVEBOOK_MAX_UPLOAD_BYTES). Send a smaller file or split the submission.")


class BodyLimitMiddleware:
    """Refuse bodies over the limit before anything parses them: by Content-Length up
    front, and by counting when the body is streamed without one."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        declared = content_length(scope)
        if declared is not None and declared > self.limit:
            response = too_large_response(Request(scope), too_large_message(self.limit))
            await response(scope, receive, send)
            return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.limit:
                raise PayloadTooLarge(self.limit)
            return message

        await self.app(scope, counting_receive, send)


def content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def prefers_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "application/json" in request.headers.get(
        "accept", ""
    )


def too_large_response(request: Request, message: str) -> Response:
    if prefers_json(request):
        return JSONResponse({"detail": message}, status_code=413)
    return templates.TemplateResponse(request, "error.html", {"message": message}, status_code=413)


# ---------------------------------------------------------------- sign-in pages

auth_router = APIRouter(tags=["pages"])


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


@auth_router.post("/signin", name="security:signin_submit", dependencies=[CsrfDep])
def signin(request: Request, session: SessionDep, form: FormDep) -> Response:
    """Check the token; keep it in a signed, httponly cookie."""
    token = str(form.get("token") or "").strip()
    target = local_path(str(form.get("next") or "/"))
    record = authenticate(session, token) if token else None
    if record is None:
        context = {"principal": None, "next": target,
                   "error": "That token is unknown or revoked."}
        return render(request, "security/signin.html", context, status_code=401)
    log.info("signed in as %r (%s)", record.name, record.role)
    response = redirect(request, target)
    sign_in_cookie(request, response, token)
    return response


@auth_router.post("/signout", name="security:signout", dependencies=[CsrfDep])
def signout(request: Request) -> Response:
    """Forget the token in this browser."""
    response = redirect(request, str(request.url_for("catalog:index")))
    sign_out_cookie(response)
    return response


def auth_required_response(request: Request, exc: Exception) -> Response:
    """JSON asks for a Bearer token; a page goes to the sign-in form and comes back."""
    assert isinstance(exc, ServebookError)
    if prefers_json(request):
        return JSONResponse({"detail": exc.message}, status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})
    back = URL(request.headers.get("referer", "")) if request.method not in SAFE_METHODS \
        else request.url
    target = local_path(back.path + (f"?{back.query}" if back.query else ""))
    url = request.url_for("security:signin").include_query_params(next=target)
    return redirect(request, str(url))
