"""Vendored front-end files are the pinned ones, and pages load them."""

import hashlib

from app.config import PROJECT_ROOT

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
