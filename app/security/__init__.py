"""Who may do what: access tokens, the sign-in cookie, CSRF tokens and the body-size limit.

On a loopback host the local user is the maintainer. Served beyond loopback, submitting
needs a submitter or maintainer token, reviewing a maintainer token and running benchmark
jobs a worker token: a Bearer header for the API, a signed httponly cookie (set by the
sign-in form) for HTML pages.

Tokens are shown once when created; only their sha256 is stored, and no log line ever
carries one.
"""

from app.security.body_limit import BodyLimitMiddleware, PayloadTooLarge
from app.security.csrf import (
    CSRF_COOKIE,
    CSRF_FIELD,
    CSRF_HEADER,
    CsrfCookieMiddleware,
    CsrfDep,
    CsrfFailed,
    register_template_globals,
    verify_csrf,
)
from app.security.exposure import (
    LOOPBACK_HOST_NAMES,
    ExposedWithoutTokens,
    allowed_host_names,
    app_is_exposed,
    check_exposure,
    is_exposed,
    request_is_exposed,
)
from app.security.forwarded import ForwardedClientMiddleware
from app.security.headers import SecurityHeadersMiddleware
from app.security.principal import (
    AUTH_COOKIE,
    AuthRequired,
    MaintainerDep,
    OptionalPrincipal,
    Principal,
    SubmitterDep,
    WorkerDep,
)
from app.security.signin import FormDep, auth_required_response, auth_router
from app.security.signing import load_secret_key
from app.security.tokens import ROLES, Role, authenticate, create_token

__all__ = [
    "AUTH_COOKIE",
    "CSRF_COOKIE",
    "CSRF_FIELD",
    "CSRF_HEADER",
    "LOOPBACK_HOST_NAMES",
    "ROLES",
    "AuthRequired",
    "BodyLimitMiddleware",
    "CsrfCookieMiddleware",
    "CsrfDep",
    "CsrfFailed",
    "ExposedWithoutTokens",
    "FormDep",
    "ForwardedClientMiddleware",
    "MaintainerDep",
    "OptionalPrincipal",
    "PayloadTooLarge",
    "Principal",
    "Role",
    "SubmitterDep",
    "WorkerDep",
    "auth_required_response",
    "auth_router",
    "authenticate",
    "SecurityHeadersMiddleware",
    "allowed_host_names",
    "app_is_exposed",
    "check_exposure",
    "create_token",
    "is_exposed",
    "load_secret_key",
    "register_template_globals",
    "request_is_exposed",
    "verify_csrf",
]
