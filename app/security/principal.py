"""Who is calling: the principal behind a request, and the dependencies that require one."""

from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import Depends, Request
from fastapi.responses import Response
from itsdangerous import BadSignature
from sqlalchemy.orm import Session

from app.db import SessionDep
from app.errors import Forbidden, ServebookError
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.labels import ROLES
from app.i18n.sentences import Sentence, register
from app.security.exposure import request_is_exposed
from app.security.signing import signer
from app.security.tokens import Role, authenticate, authenticate_session

AUTH_COOKIE = "servebook_auth"
AUTH_MAX_AGE_S = 30 * 24 * 3600


class AuthRequired(ServebookError):
    status_code = 401


@dataclass(frozen=True)
class Principal:
    name: str
    role: Role
    via: Literal["loopback", "token"]

    @property
    def is_maintainer(self) -> bool:
        return self.role == "maintainer"


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def cookie_session(request: Request) -> str | None:
    """The browser session id the sign-in cookie carries (never a token)."""
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
    token = bearer_token(request)
    if token:
        record = authenticate(session, token)
        if record is None:
            raise AuthRequired(TOKEN_UNKNOWN())
    else:
        on_page = not request.scope["path"].startswith("/api/")
        session_id = cookie_session(request) if on_page else None
        record = authenticate_session(session, session_id) if session_id else None
    if not request_is_exposed(request):
        return Principal(record.name if record else "local", "maintainer", "loopback")
    if record is None:
        return None
    return Principal(record.name, record.role, "token")  # type: ignore[arg-type]


# A role named inside a sentence, in the words the pages use for it.
ROLE_WORDS = {role: register(f"auth.role.{role}", words) for role, words in ROLES.items()}


def role_words(role: str) -> Sentence | str:
    """The role as pages name it; a role this version does not know is shown as stored."""
    kind = ROLE_WORDS.get(role)
    return kind() if kind else role


TOKEN_UNKNOWN = register("auth.token_unknown", _l("The access token is unknown or revoked."))
SUBMIT_NEEDS_TOKEN = register(
    "auth.submit_needs_token", _l("Submitting needs a submitter or maintainer access token.")
)
WORKER_CANNOT_SUBMIT = register(
    "auth.worker_cannot_submit",
    _l("'%(name)s' is a worker token; submitting needs a submitter or maintainer."),
)
REVIEW_NEEDS_TOKEN = register(
    "auth.review_needs_token", _l("Reviewing needs a maintainer access token.")
)
REVIEW_NEEDS_MAINTAINER = register(
    "auth.review_needs_maintainer", _l("'%(name)s' is a %(role)s; reviewing needs a maintainer.")
)
RUN_NEEDS_TOKEN = register(
    "auth.run_needs_token", _l("Running benchmark jobs needs a worker access token.")
)
RUN_NEEDS_WORKER = register(
    "auth.run_needs_worker",
    _l(
        "'%(name)s' is a %(role)s; running benchmark jobs needs a worker token "
        "(`servebook token create --role worker`)."
    ),
)


def optional_principal(request: Request, session: SessionDep) -> Principal | None:
    try:
        return resolve_principal(request, session)
    except AuthRequired:
        return None


def require_submitter(request: Request, session: SessionDep) -> Principal:
    principal = resolve_principal(request, session)
    if principal is None:
        raise AuthRequired(SUBMIT_NEEDS_TOKEN())
    if principal.role == "worker":
        raise Forbidden(WORKER_CANNOT_SUBMIT(name=principal.name))
    return principal


def require_maintainer(request: Request, session: SessionDep) -> Principal:
    principal = resolve_principal(request, session)
    if principal is None:
        raise AuthRequired(REVIEW_NEEDS_TOKEN())
    if not principal.is_maintainer:
        role = role_words(principal.role)
        raise Forbidden(REVIEW_NEEDS_MAINTAINER(name=principal.name, role=role))
    return principal


def require_worker(request: Request, session: SessionDep) -> Principal:
    """Benchmark workers: a worker token, or anyone on a dashboard served on loopback."""
    principal = resolve_principal(request, session)
    if principal is None:
        raise AuthRequired(RUN_NEEDS_TOKEN())
    if principal.via == "token" and principal.role != "worker":
        raise Forbidden(RUN_NEEDS_WORKER(name=principal.name, role=role_words(principal.role)))
    return principal


OptionalPrincipal = Annotated[Principal | None, Depends(optional_principal)]
SubmitterDep = Annotated[Principal, Depends(require_submitter)]
MaintainerDep = Annotated[Principal, Depends(require_maintainer)]
WorkerDep = Annotated[Principal, Depends(require_worker)]


def sign_in_cookie(request: Request, response: Response, session_id: str) -> None:
    value = signer(request, "auth").dumps(session_id)
    response.set_cookie(
        AUTH_COOKIE,
        value,
        max_age=AUTH_MAX_AGE_S,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


def sign_out_cookie(response: Response) -> None:
    response.delete_cookie(AUTH_COOKIE, httponly=True, samesite="lax")
