"""Text with the NUL character is refused at the edge, on every database.

PostgreSQL text cannot hold NUL (U+0000) and SQLite can, so without this check the same
request stored on one and failed with a server error on the other. A request whose query
string, form body or JSON body carries one (`%00`, `\\u0000`) gets a 422 naming where.
"""

import re

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register, render
from app.security.body_limit import PayloadTooLarge, too_large_response
from app.security.http import prefers_json
from app.web import error_page

# An escape for U+0000 in JSON: \u0000 after an even number of backslashes (so not the
# literal text "\\u0000"); in URL encoding, %00.
_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000", re.IGNORECASE)
_CHECKED_BODIES = (b"application/json", b"application/x-www-form-urlencoded")
MESSAGE = "text may not contain the NUL character (U+0000)"
# What a page says, in the reader's language (JSON names the field and keeps MESSAGE).
REFUSED_ON_PAGE = {
    "query": register(
        "request.nul_in_query", _l("The address may not contain the NUL character (U+0000).")
    ),
    "body": register(
        "request.nul_in_body", _l("The form may not contain the NUL character (U+0000).")
    ),
}


def has_nul(data: bytes, *, json: bool = False) -> bool:
    """NUL raw or escaped: JSON's escape in a JSON body, URL encoding anywhere else."""
    if b"\x00" in data:
        return True
    if json:  # the substring test first: cheaper than the pattern, which needs one to match
        return (b"\\u0000" in data or b"\\U0000" in data) and bool(_JSON_NUL.search(data))
    return b"%00" in data


class NulRefusedMiddleware:
    """Runs inside the body-size limit, so the body it reads whole is already bounded."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if has_nul(scope.get("query_string", b"")) or b"\x00" in scope["path"].encode():
            await refused(scope, "query")(scope, receive, send)
            return
        content_type = dict(scope.get("headers", [])).get(b"content-type", b"").lower()
        if not content_type.startswith(_CHECKED_BODIES):
            await self.app(scope, receive, send)
            return
        try:
            messages = await whole_body(receive)
        except PayloadTooLarge as error:  # raised by the size limit around this middleware
            await too_large_response(Request(scope), error.said)(scope, receive, send)
            return
        body = b"".join(m.get("body", b"") for m in messages)
        if has_nul(body, json=content_type.startswith(b"application/json")):
            await refused(scope, "body")(scope, receive, send)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


async def whole_body(receive: Receive) -> list[Message]:
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body"):
            return messages


def refused(scope: Scope, where: str) -> Response:
    if prefers_json(Request(scope)):
        return JSONResponse({"errors": [{"field": where, "message": MESSAGE}]}, status_code=422)
    return error_page(Request(scope), render(REFUSED_ON_PAGE[where]()), 422)
