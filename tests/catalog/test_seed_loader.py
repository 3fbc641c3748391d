"""`servebook seed`: idempotent, updates edited rows, and all-or-nothing on a broken file."""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from app.cli import main
from app.config import PROJECT_ROOT
from app.db import make_engine, make_sessionmaker, upgrade_database
from app.models import Hardware, LlmModel, OfficialPairing
from tests.conftest import sqlite_settings


@pytest.fixture
def empty_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "seed.db"
    upgrade_database(sqlite_settings(path))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
    from app.config import get_settings

    get_settings.cache_clear()
    yield path
    get_settings.cache_clear()


@pytest.fixture
def seed_copy(tmp_path: Path) -> Path:
    target = tmp_path / "seed_data"
    shutil.copytree(PROJECT_ROOT / "seed_data", target)
    return target


def seed(directory: Path) -> str:
    result = CliRunner().invoke(main, ["seed", "--dir", str(directory)])
    return f"{result.exit_code}:{result.output}"


def count(path: Path, model_class: type) -> int:
    engine = make_engine(sqlite_settings(path))
    with make_sessionmaker(engine)() as session:
        total = session.scalar(select(func.count()).select_from(model_class))
    engine.dispose()
    return total


def usable(path: Path, slug: str) -> float:
    engine = make_engine(sqlite_settings(path))
    with make_sessionmaker(engine)() as session:
        value = session.scalar(select(Hardware.usable_memory_gb).where(Hardware.slug == slug))
    engine.dispose()
    return value


def test_second_run_changes_nothing(empty_db: Path, seed_copy: Path) -> None:
    first = seed(seed_copy)
    assert first.startswith("0:") and "created" in first
    assert count(empty_db, LlmModel) >= 13 and count(empty_db, OfficialPairing) > 0
    assert seed(seed_copy) == "0:catalog already up to date\n"


def test_edited_file_updates_its_rows(empty_db: Path, seed_copy: Path) -> None:
    seed(seed_copy)
    path = seed_copy / "hardware.yaml"
    path.write_text(
        path.read_text().replace(
            "usable_memory_gb: {value: 236,", "usable_memory_gb: {value: 230,", 1
        )
    )
    assert seed(seed_copy) == "0:0 created, 1 updated, 0 removed\n"
    assert usable(empty_db, "mac-studio-m5-ultra-256gb") == 230


def test_broken_file_names_file_entry_and_field_and_leaves_db_untouched(
    empty_db: Path, seed_copy: Path
) -> None:
    seed(seed_copy)
    path = seed_copy / "hardware.yaml"
    text = path.read_text()
    path.write_text(
        text.replace("usable_memory_gb: {value: 236,", "usable_memory_gb: {value: 230,", 1).replace(
            "usable_memory_gb: {value: 480,", "usable_memory_gb: {value: lots,", 1
        )
    )
    output = seed(seed_copy)
    assert output.startswith("1:")
    assert "hardware.yaml" in output and "mac-studio-m5-ultra-512gb" in output
    assert "usable_memory_gb" in output
    assert usable(empty_db, "mac-studio-m5-ultra-256gb") == 236  # the valid edit was not applied
