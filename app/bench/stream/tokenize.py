"""Counting a prompt with the server's own tokenizer, when the server offers one.

vLLM (and servers following it) answer ``POST /tokenize`` at the server root with
``{"count": n, ...}`` for a chat ``messages`` body, chat template included. A server that
does not is measured with estimated lengths (``app.bench.prompts.PromptSizer``), and the
result says so.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit, urlunsplit

import httpx

# The answer lists every token id; a few bytes each, so this bounds a count of ~1M tokens.
MAX_TOKENIZE_BODY = 16 * 1024 * 1024
# The whole exchange, however the server drips its answer.
TOKENIZE_TIMEOUT_S = 60.0


def tokenize_url(base_url: str) -> str:
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urlunsplit((parts.scheme, parts.netloc, f"{path}/tokenize", "", ""))


class ServerTokenizer:
    """Counts chat prompts through ``/tokenize``; ``available`` turns False at the first
    answer that is not a count, and no further request is sent."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        model: str,
        timeout_s: float = TOKENIZE_TIMEOUT_S,
    ) -> None:
        self.http = http
        self.timeout_s = timeout_s
        self.url = tokenize_url(base_url)
        self.model = model
        self.available: bool | None = None  # None until asked once

    async def count(self, messages: list[dict[str, str]]) -> int | None:
        if self.available is False:
            return None
        counted = await self._ask(messages)
        self.available = counted is not None
        return counted

    async def _ask(self, messages: list[dict[str, str]]) -> int | None:
        body = {"model": self.model, "messages": messages}
        raw = bytearray()
        try:
            async with (
                asyncio.timeout(self.timeout_s),
                self.http.stream("POST", self.url, json=body) as response,
            ):
                if response.status_code != 200:
                    return None
                async for piece in response.aiter_bytes():
                    raw += piece
                    if len(raw) > MAX_TOKENIZE_BODY:
                        return None
        except (httpx.HTTPError, TimeoutError):
            return None
        try:
            count = json.loads(raw).get("count")
        except (ValueError, AttributeError):
            return None
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            return count
        return None
