"""Vendored front-end files are the pinned ones, and pages load them; static files are
answered from memory, without a trip to the thread pool."""

import hashlib
from pathlib import Path

import anyio.to_thread
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from app.config import PROJECT_ROOT
from app.static_files import CachedStaticFiles

VENDOR = PROJECT_ROOT / "static" / "vendor"


def test_vendored_files_match_their_pinned_checksums() -> None:
    lines = (VENDOR / "SHA256SUMS").read_text().splitlines()
    assert lines
    for line in lines:
        digest, name = line.split()
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name


def test_pages_load_the_pinned_htmx(client) -> None:  # noqa: ANN001
    html = client.get("/").text
    assert "/static/vendor/htmx-2.0.11.min.js" in html
    assert client.get("/static/vendor/htmx-2.0.11.min.js").status_code == 200


def static_app(folder: Path) -> TestClient:
    app = Starlette()
    app.mount("/static", CachedStaticFiles(directory=folder), name="static")
    return TestClient(app)


def test_files_are_answered_from_memory_as_starlette_answers_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_thread(*_: object, **__: object) -> None:
        raise AssertionError("a static file took a trip to the thread pool")

    (tmp_path / "app.css").write_text("body { color: red }")
    client = static_app(tmp_path)
    assert client.get("/static/missing.css").status_code == 404  # its folder checked, once
    monkeypatch.setattr(anyio.to_thread, "run_sync", no_thread)
    first = client.get("/static/app.css")
    assert first.status_code == 200 and first.text == "body { color: red }"
    assert first.headers["content-type"].startswith("text/css")
    assert first.headers["content-length"] == str(len(first.content))
    assert first.headers["cache-control"] == "no-cache"
    assert first.headers["etag"] and first.headers["last-modified"]
    again = client.get("/static/app.css", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    head = client.head("/static/app.css")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == first.headers["content-length"]
    # An edited file (a deploy, or development) is read again: its size or time moved.
    (tmp_path / "app.css").write_text("body { color: blue; margin: 0 }")
    edited = client.get("/static/app.css")
    assert edited.text == "body { color: blue; margin: 0 }"
    assert edited.headers["etag"] != first.headers["etag"]


def test_vendored_files_are_kept_a_year_from_memory(client) -> None:  # noqa: ANN001
    name = "/static/vendor/htmx-2.0.11.min.js"
    first = client.get(name)
    assert first.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert first.content == (VENDOR / "htmx-2.0.11.min.js").read_bytes()
