"""A real uvicorn server on 127.0.0.1 and Debian's chromium driven by Playwright.

tests/conftest.py makes the fixtures available to every test; import only the
`LiveServer` type where a test wants it. `live_server` serves `create_app(settings)` over
the test's own migrated and seeded database (the `settings` fixture of tests/conftest.py)
on a free port, in a thread of the test process; `live_server.url("records:new")` builds
URLs from route names. `browser` is one chromium per test session (per xdist worker);
`page` is a fresh context and tab whose relative URLs resolve against the live server.
Mark such tests `@pytest.mark.browser`.
Set SERVEBOOK_CHROMIUM to use another chromium binary.
"""

import asyncio
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI

from app.config import Settings
from app.main import create_app

CHROMIUM = os.environ.get("SERVEBOOK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
START_TIMEOUT_S = 20.0
PAGE_TIMEOUT_MS = 15_000


@dataclass
class LiveServer:
    base_url: str
    app: FastAPI
    settings: Settings

    def url(self, name: str, /, **path_params: Any) -> str:
        """Absolute URL of a named route, e.g. url("records:detail", record_id=3)."""
        return self.base_url + str(self.app.url_path_for(name, **path_params))


def loopback_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def start_server(app: FastAPI, **config: Any) -> tuple[uvicorn.Server, threading.Thread, int]:
    """`config`: more uvicorn.Config options, e.g. proxy_headers=False as `servebook serve`."""
    # Binding the socket here (port 0) means no other process can take the port first.
    sock = loopback_socket()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the live server did not start")
        time.sleep(0.02)
    return server, thread, port


@pytest.fixture
def live_server(settings: Settings) -> Iterator[LiveServer]:
    app = create_app(settings)
    server, thread, port = start_server(app)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", app, settings)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def outside_browser_loop() -> Iterator[None]:
    """Playwright's sync API keeps its event loop marked as running on the test thread for
    as long as the (session-scoped) browser lives, so code that runs a coroutine itself (a
    CLI command, a benchmark) would be refused by asyncio.run in any later test of the same
    worker. Within this block the loop is unmarked; it is marked again after."""
    loop = asyncio._get_running_loop()
    asyncio._set_running_loop(None)
    try:
        yield
    finally:
        asyncio._set_running_loop(loop)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM} (install it with `make browser`)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, live_server: LiveServer) -> Iterator[Any]:
    context = browser.new_context(base_url=live_server.base_url)
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.js_errors = errors  # tests may assert the page ran without script errors
    try:
        yield tab
    finally:
        context.close()
