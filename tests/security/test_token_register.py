"""`servebook token register`: a token made elsewhere (a deployment's shared worker token)
is stored as its hash, read from the environment, once however often it is registered."""

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.cli import main
from app.models import ApiToken
from app.security.tokens import authenticate

SHARED = "sb_" + "s" * 43
REGISTER = ["token", "register", "--role", "worker", "--name", "workers"]


def register(monkeypatch: pytest.MonkeyPatch, value: str | None) -> tuple[int, str]:
    if value is None:
        monkeypatch.delenv("SHARED_TOKEN", raising=False)
    else:
        monkeypatch.setenv("SHARED_TOKEN", value)
    result = CliRunner().invoke(main, [*REGISTER, "--from-env", "SHARED_TOKEN"])
    return result.exit_code, result.output


def tokens(session: Session) -> int:
    session.rollback()  # see what the command committed
    return session.scalar(select(func.count()).select_from(ApiToken))


@pytest.mark.postgresql
def test_a_shared_token_is_registered_once_and_then_authenticates(
    cli_database: str, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert register(monkeypatch, SHARED) == (0, "worker token for workers registered\n")
    assert register(monkeypatch, SHARED) == (0, "worker token for workers already registered\n")
    assert tokens(session) == 1
    holder = authenticate(session, SHARED)
    assert holder is not None and (holder.name, holder.role) == ("workers", "worker")
    assert holder.token_hash != SHARED  # only the hash is stored


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (None, "SHARED_TOKEN is not set"),
        ("", "SHARED_TOKEN is not set"),
        ("s" * 46, "SHARED_TOKEN: a token starts with sb_"),
        ("sb_short", "at least 35 characters"),
    ],
)
def test_a_missing_or_weak_token_is_refused_and_nothing_stored(
    cli_database: str,
    session: Session,
    monkeypatch: pytest.MonkeyPatch,
    value: str | None,
    says: str,
) -> None:
    code, output = register(monkeypatch, value)
    assert code == 1 and says in output
    assert tokens(session) == 0
