"""The runtime and version a server reports about itself, read by the client, never typed in.

Each engine answers at its own path:

- vLLM: ``GET /version`` -> ``{"version": "0.12.0"}``;
- SGLang: ``GET /get_server_info`` -> ``{"version": "0.5.9", ...}``;
- llama.cpp server: ``GET /props`` -> ``{"build_info": "b6100-...", ...}``;
- Ollama: ``GET /api/version`` -> ``{"version": "0.11.11"}``.

The paths are asked in that order, at the server root (a ``/v1`` suffix of the base URL is
dropped); the first that answers with a version names the runtime. Hosts are checked
against the same allow-list as a benchmark, and a server that answers none of them gives
``None``: an unknown version is said to be unknown, never guessed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from app.bench.result import ServerVersion
from app.bench.transport.endpoint import make_http_client
from app.bench.transport.hosts import check_url_allowed

VERSION_TIMEOUT_S = 5.0


def _vllm(body: dict[str, Any]) -> str | None:
    return _text(body.get("version"))


def _sglang(body: dict[str, Any]) -> str | None:
    # Only SGLang's server info holds these; a bare {"version"} there is vLLM's shape.
    if "version" in body and any(key in body for key in ("model_path", "tp_size", "port")):
        return _text(body.get("version"))
    return None


def _llama_cpp(body: dict[str, Any]) -> str | None:
    build = _text(body.get("build_info"))
    if build is None:
        return None
    # "b6100-1a2b3c4d": the build number is the version the project releases under.
    return build.split("-", 1)[0]


def _ollama(body: dict[str, Any]) -> str | None:
    return _text(body.get("version"))


# (runtime slug as the catalog names it, path at the server root, how to read the answer)
PROBES: tuple[tuple[str, str, Callable[[dict[str, Any]], str | None]], ...] = (
    ("sglang", "/get_server_info", _sglang),
    ("vllm", "/version", _vllm),
    ("llama-cpp", "/props", _llama_cpp),
    ("ollama", "/api/version", _ollama),
)


def _text(value: Any) -> str | None:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        text = str(value).strip()
        return text[:100] or None
    return None


def server_root(base_url: str) -> str:
    """The server's root: ``base_url`` without a trailing ``/v1``."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/").removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


async def read_server_version(
    base_url: str,
    *,
    allowed_hosts: Iterable[str] = (),
    api_key: str | None = None,
    http: httpx.AsyncClient | None = None,
) -> ServerVersion | None:
    """The first runtime whose version path answers, or None when none does."""
    root = server_root(base_url)
    check_url_allowed(root or base_url, list(allowed_hosts))
    client = http or make_http_client(
        api_key=api_key, connect_timeout_s=VERSION_TIMEOUT_S, request_timeout_s=VERSION_TIMEOUT_S
    )
    try:
        for runtime, path, read in PROBES:
            body = await _get_json(client, root + path)
            version = read(body) if body is not None else None
            if version is not None:
                return ServerVersion(runtime=runtime, version=version, source=path)
        return None
    finally:
        if http is None:
            await client.aclose()


async def _get_json(client: httpx.AsyncClient, url: str) -> dict[str, Any] | None:
    try:
        response = await client.get(url, headers={"Accept": "application/json"})
        if response.status_code != 200:
            await response.aread()
            return None
        body = response.json()
    except (httpx.HTTPError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def read_server_version_sync(
    base_url: str, *, allowed_hosts: Iterable[str] = (), api_key: str | None = None
) -> ServerVersion | None:
    """For synchronous callers (a CLI command, a worker thread); a caller whose thread
    already runs an event loop gets the answer from a fresh thread of its own."""

    def read() -> ServerVersion | None:
        return asyncio.run(
            read_server_version(base_url, allowed_hosts=list(allowed_hosts), api_key=api_key)
        )

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return read()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="servebook-version") as pool:
        return pool.submit(read).result()
