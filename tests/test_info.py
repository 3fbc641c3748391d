"""`servebook info` and `--version`: what is installed, where its data lives, and how far
its database is, with a database password never printed."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import main
from app.config import get_settings
from app.installation import shown_url
from tests.pg_server import free_port


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SERVEBOOK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_version() -> None:
    assert invoke("--version").strip() == "servebook 0.1.0"


def test_info_follows_the_database_from_empty_to_served(env: Path) -> None:
    before = invoke("info")
    assert "servebook 0.1.0" in before
    assert "(checkout)" in before
    assert f"data folder   {env / 'data'}" in before
    assert f"database      sqlite:///{env / 'data' / 'servebook.db'}" in before
    assert "none (empty database)" in before and "run servebook db upgrade" in before

    invoke("db", "upgrade")
    invoke("seed")
    after = invoke("info")
    assert "(code head" in after and ": current)" in after
    assert "catalog       revision" in after and " 0 models" not in after


def test_info_hides_the_password_and_says_when_the_server_does_not_answer(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"postgresql+psycopg://servebook:hunter2@127.0.0.1:{free_port()}/servebook"
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("SERVEBOOK_SECRET_KEY", "k")
    output = invoke("info")
    assert "hunter2" not in output
    assert f"postgresql+psycopg://servebook:***@127.0.0.1:{url.split(':')[3]}" in output
    assert "the database did not answer" in output


def test_shown_url_keeps_a_url_without_password() -> None:
    assert shown_url("sqlite:////tmp/x.db") == "sqlite:////tmp/x.db"
