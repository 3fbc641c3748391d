"""Where servebook writes: one data folder, the checkout's data/ or the user's data folder
once installed; never the folder a command happens to be started in."""

from pathlib import Path

import pytest

from app.config import PROJECT_ROOT, Settings, default_data_dir
from app.security.signing import load_secret_key, secret_key_path

SERVER_URL = "postgresql+psycopg://servebook:secret@127.0.0.1:1/servebook"


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty current folder, and an environment without servebook settings."""
    folder = tmp_path / "current"
    folder.mkdir()
    monkeypatch.chdir(folder)
    for name in ("DATABASE_URL", "SERVEBOOK_DATABASE_URL", "SERVEBOOK_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    return folder


def test_a_checkout_keeps_its_data_in_its_own_data_folder(elsewhere: Path) -> None:
    assert default_data_dir(from_checkout=True) == PROJECT_ROOT / "data"
    assert Settings().database_url == f"sqlite:///{PROJECT_ROOT / 'data' / 'servebook.db'}"


def test_an_installed_copy_keeps_its_data_in_the_user_data_folder(
    elsewhere: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert default_data_dir(from_checkout=False) == tmp_path / "share" / "servebook"


def test_the_data_folder_holds_the_database_and_the_hub_cache(
    elsewhere: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVEBOOK_DATA_DIR", str(tmp_path / "data"))
    settings = Settings()
    assert settings.sqlite_path == tmp_path / "data" / "servebook.db"
    assert settings.hub_cache_dir == tmp_path / "data" / "hub_cache"


def test_database_url_overrides_the_data_folder(
    elsewhere: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVEBOOK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DATABASE_URL", SERVER_URL)
    assert Settings().database_url == SERVER_URL


def test_on_a_database_server_the_secret_key_goes_to_the_data_folder(
    elsewhere: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", SERVER_URL)
    monkeypatch.setenv("SERVEBOOK_DATA_DIR", str(tmp_path / "data"))
    settings = Settings(secret_key="")
    key = load_secret_key(settings)
    assert secret_key_path(settings) == tmp_path / "data" / "secret_key"
    assert (tmp_path / "data" / "secret_key").read_text() == key
    assert (tmp_path / "data" / "secret_key").stat().st_mode & 0o777 == 0o600
    assert list(elsewhere.iterdir()) == []  # nothing in the current folder
    assert load_secret_key(settings) == key  # and the same key the next time


def test_beside_a_sqlite_file_the_secret_key_sits_next_to_it(
    elsewhere: Path, tmp_path: Path
) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'db' / 'x.db'}", secret_key="")
    load_secret_key(settings)
    assert (tmp_path / "db" / "secret_key").is_file()
    assert list(elsewhere.iterdir()) == []
