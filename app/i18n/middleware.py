"""Sets the language of each request before anything renders, and remembers a `?lang=`
choice in a cookie so the next page keeps it."""

from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.i18n.catalogs import DEFAULT_LOCALE, reset_locale, set_locale
from app.i18n.negotiation import COOKIE, QUERY, choose_locale, supported

COOKIE_MAX_AGE_S = 365 * 24 * 3600


class LocaleMiddleware:
    """Pages vary by language, so they say so (Vary); JSON under /api does not change."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        is_page = not scope["path"].startswith(("/api/", "/static/"))
        if not is_page:
            # JSON answers in codes and English whatever the reader's language: a lazy label
            # that reaches an API body reads the same for every client. Nothing to read.
            token = set_locale(DEFAULT_LOCALE)
            try:
                await self.app(scope, receive, send)
            finally:
                reset_locale(token)
            return
        headers = Headers(scope=scope)
        query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get(QUERY, [None])[-1]
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header names no language
            cookie = SimpleCookie()
        remembered = cookie[COOKIE].value if COOKIE in cookie else None
        locale = choose_locale(query, remembered, headers.get("accept-language"))
        chosen = supported(query)

        async def send_with_locale(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                out.add_vary_header("Accept-Language")
                out.add_vary_header("Cookie")
                if chosen and chosen != remembered:
                    out.append(
                        "Set-Cookie",
                        f"{COOKIE}={chosen}; Max-Age={COOKIE_MAX_AGE_S}; Path=/; SameSite=Lax",
                    )
            await send(message)

        token = set_locale(locale)
        try:
            await self.app(scope, receive, send_with_locale)
        finally:
            reset_locale(token)
