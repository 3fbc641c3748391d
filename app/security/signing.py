"""The key that signs the sign-in and CSRF cookies."""

import secrets
from pathlib import Path

from fastapi import Request
from itsdangerous import URLSafeTimedSerializer

from app.config import Settings


def secret_key_path(settings: Settings) -> Path:
    """Beside the SQLite file, else (a database server) in the data folder: never the current
    folder, which changes with wherever the command happens to be started."""
    folder = settings.sqlite_path.parent if settings.sqlite_path else settings.data_dir
    return folder.resolve() / "secret_key"


def load_secret_key(settings: Settings) -> str:
    """The configured key, else one generated once and kept beside the database."""
    if settings.secret_key:
        return settings.secret_key
    if settings.is_sqlite and settings.sqlite_path is None:
        return secrets.token_urlsafe(32)  # in-memory database: a key for this process
    path = secret_key_path(settings)
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(32)
    path.touch(mode=0o600)
    path.write_text(key)
    return key


def signer(request: Request, salt: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(request.app.state.secret_key, salt=salt)
