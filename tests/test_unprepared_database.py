"""A command run before the database has its tables (a first `servebook plan` before any
`servebook serve`) says what to run instead of printing a database error, on SQLite and on
PostgreSQL; other database errors are left as they are."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import main
from app.config import get_settings
from tests.pg_server import PostgresServer

COMMANDS = [
    ["plan", "--model", "llama-3.1-8b-instruct", "--users", "4", "--min-decode", "10"],
    ["estimate", "--model", "llama-3.1-8b-instruct", "--hardware", "rtx-4090-24gb"],
]


@pytest.fixture
def empty_database(
    database_backend: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch
) -> Iterator[str]:
    """A database with no tables at all, as the commands' settings name it."""
    if database_backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'empty.db'}"
        name = None
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        name = server.create_database()
        url = server.url(name)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("SERVEBOOK_DATA_DIR", str(tmp_path / "data"))
    get_settings.cache_clear()
    yield url
    get_settings.cache_clear()
    if name is not None:
        server.drop_database(name)


@pytest.mark.postgresql
@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: args[0])
def test_a_command_on_an_empty_database_says_what_to_run(
    empty_database: str, args: list[str]
) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "has no servebook tables yet" in result.output
    assert "servebook serve" in result.output and "servebook db upgrade" in result.output
    assert "Traceback" not in result.output and "OperationalError" not in result.output


@pytest.mark.postgresql
def test_the_same_command_answers_once_the_database_is_prepared(empty_database: str) -> None:
    assert CliRunner().invoke(main, ["db", "upgrade"]).exit_code == 0
    assert CliRunner().invoke(main, ["seed"]).exit_code == 0
    result = CliRunner().invoke(main, COMMANDS[0])
    assert result.exit_code == 0, result.output
    assert "has no servebook tables" not in result.output
