"""Token names fit their column on every database: a longer one is refused with a reason,
never stored cut (PostgreSQL) or whole (SQLite)."""

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.cli import main
from app.models import ApiToken
from app.security.tokens import MAX_NAME_LENGTH

pytestmark = pytest.mark.postgresql


def tokens(session: Session) -> int:
    session.rollback()  # read what the command committed
    return session.scalar(select(func.count()).select_from(ApiToken)) or 0


def test_a_name_of_the_column_length_is_kept_whole(cli_database: str, session: Session) -> None:
    name = "n" * MAX_NAME_LENGTH
    result = CliRunner().invoke(main, ["token", "create", "--role", "submitter", "--name", name])
    assert result.exit_code == 0, result.output
    assert session.scalar(select(ApiToken.name)) == name


@pytest.mark.parametrize("name", ["n" * (MAX_NAME_LENGTH + 1), "   "])
def test_a_name_that_cannot_be_stored_is_refused(
    cli_database: str, session: Session, name: str
) -> None:
    before = tokens(session)
    result = CliRunner().invoke(main, ["token", "create", "--role", "submitter", "--name", name])
    assert result.exit_code != 0
    assert f"1 to {MAX_NAME_LENGTH} characters" in result.output
    assert "Traceback" not in result.output
    assert tokens(session) == before
