"""Settings: where the SQLite file is, for every way a database URL can be written."""

from pathlib import Path

import pytest

from app.config import Settings


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite://", None),
        ("sqlite:///:memory:", None),
        ("sqlite:///data/x.db", Path("data/x.db")),
        ("sqlite:////tmp/x.db", Path("/tmp/x.db")),
        ("postgresql://user@host/db", None),
    ],
)
def test_sqlite_path(url: str, expected: Path | None) -> None:
    assert Settings(database_url=url).sqlite_path == expected
