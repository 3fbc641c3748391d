"""Serving beyond loopback: allowed only once an access token exists."""

from sqlalchemy.orm import Session

from app.config import Settings, is_loopback
from app.security.tokens import TokenRepository

# Host headers a loopback-only app answers to ("testserver" is the in-process test client's).
LOOPBACK_HOST_NAMES = ["127.0.0.1", "localhost", "[::1]", "::1", "testserver"]


class ExposedWithoutTokens(RuntimeError):
    pass


def is_exposed(settings: Settings) -> bool:
    return not is_loopback(settings.host)


def check_exposure(settings: Settings, session: Session) -> None:
    """Refuse to serve beyond loopback until at least one access token exists."""
    if is_exposed(settings) and TokenRepository(session).count_active() == 0:
        raise ExposedWithoutTokens(
            f"Refusing to serve on {settings.host}: no access token exists. Create one with "
            "`servebook token create --role maintainer --name NAME`, or serve on 127.0.0.1."
        )
