"""Security headers on every response the app sends: pages, JSON, static files, 304s, errors.

The pages load only the app's own scripts and styles (htmx and Chart.js are vendored under
/static), so the policy allows nothing inline and nothing from elsewhere, and no other site
may frame a page (its Accept button must not be clickable under someone else's overlay).

One page differs: the API docs (/docs) start Swagger UI with a short inline script, which
runs only because it carries the response's one-time nonce (`docs_policy`); everything
else stays as strict.
"""

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.security.http import prefers_json

POLICY = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
]
CONTENT_SECURITY_POLICY = "; ".join(POLICY)


def docs_policy(nonce: str) -> str:
    """The policy of the API docs page: the same, plus its one inline script by nonce."""
    return "; ".join(
        f"script-src 'self' 'nonce-{nonce}'" if rule.startswith("script-src") else rule
        for rule in POLICY
    )


DOCS_PATH = "/docs"
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


class SecurityHeadersMiddleware:
    """Adds SECURITY_HEADERS to every HTTP response that passes through it (outermost)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                # A route that sets its own policy (the docs page, with its nonce) keeps it.
                own_policy = scope["path"] == DOCS_PATH and "content-security-policy" in headers
                for name, value in SECURITY_HEADERS.items():
                    if not (own_policy and name == "Content-Security-Policy"):
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def server_error(request: Request, exc: Exception) -> Response:
    """The 500 answer to an exception nothing else handled. Starlette sends it from outside
    every middleware (so a failing middleware is covered too), past SecurityHeadersMiddleware:
    it carries the headers itself. It says no more than Starlette's own answer would."""
    headers = dict(SECURITY_HEADERS)
    if prefers_json(request):
        return JSONResponse({"detail": "Internal Server Error"}, status_code=500, headers=headers)
    return PlainTextResponse("Internal Server Error", status_code=500, headers=headers)
