"""What the security checks read off a request: whether it may change state, whether it
wants JSON."""

from fastapi import Request

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def prefers_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "application/json" in request.headers.get(
        "accept", ""
    )
