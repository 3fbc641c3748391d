"""The request body-size limit, enforced before anything parses a body."""

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import TOO_LARGE
from app.i18n.sentences import Sentence, english, render
from app.security.http import SAFE_METHODS, prefers_json
from app.web import error_page


class PayloadTooLarge(HTTPException):
    """Raised while streaming a body that outgrows the limit (no Content-Length given)."""

    def __init__(self, limit: int) -> None:
        self.said = TOO_LARGE(limit=limit)
        super().__init__(413, english(self.said))


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
            response = too_large_response(Request(scope), TOO_LARGE(limit=self.limit))
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


def too_large_response(request: Request, said: Sentence) -> Response:
    """JSON: the English detail with the code and limit; a page: the reader's language."""
    if prefers_json(request):
        return JSONResponse({"detail": english(said), **said.as_json()}, status_code=413)
    return error_page(request, render(said), 413)
