"""Submissions are checked against a per-process snapshot of the catalog, kept under the
catalog definition: a seed or catalog edit committed anywhere (this process, or another
app process on the same SQLite file or PostgreSQL) is seen by the next submission, while a
record (which moves only the catalog revision) leaves the snapshot in place.

The other process is a real uvicorn started from the command line on the test's database.
"""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.catalog.references import REFERENCES, catalog_references
from app.catalog.revision import bump_definition, current_definition
from app.catalog.seed import seed_catalog
from app.catalog.seed_schema import SeedCatalog, load_catalog
from app.config import PROJECT_ROOT, Settings
from app.db import session_scope
from app.models import Artifact, Record
from app.records.storage import service
from tests.conftest import TEST_SECRET_KEY
from tests.records.conftest import GLM, GLM_FP8, post_record

pytestmark = pytest.mark.postgresql

ADDED, DROPPED = "glm-5.3-flash-fp8-reupload", "glm-5.3-flash-fp8-mirror"
START_S = 60


def with_extra_files(*slugs: str) -> SeedCatalog:
    """The seed catalog with copies of GLM's FP8 file under new slugs."""
    catalog = load_catalog(PROJECT_ROOT / "seed_data")
    models = []
    for model in catalog.models:
        if model.slug == GLM:
            fp8 = next(a for a in model.artifacts if a.slug == GLM_FP8)
            copies = [fp8.model_copy(update={"slug": slug}) for slug in slugs]
            model = model.model_copy(update={"artifacts": [*model.artifacts, *copies]})
        models.append(model)
    return catalog.model_copy(update={"models": models})


def reseed(settings: Settings, *slugs: str) -> None:
    with session_scope(settings) as session:
        assert seed_catalog(session, with_extra_files(*slugs)).changed


def remove_file(settings: Settings, slug: str) -> None:
    """A catalog edit: the row goes, and the definition moves in the same transaction."""
    with session_scope(settings) as session:
        session.execute(delete(Artifact).where(Artifact.slug == slug))
        bump_definition(session)


def naming(valid: dict[str, Any], artifact: str) -> dict[str, Any]:
    return {**valid, "artifact": artifact}


def refused_fields(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 422, response.text
    return {error["field"]: error["message"] for error in response.json()["errors"]}


def refused_artifact(response: httpx.Response) -> str:
    return refused_fields(response)["artifact"]


def known_but_invalid(valid: dict[str, Any], artifact: str) -> dict[str, Any]:
    """A record naming the file with a bad GPU count: refused, storing nothing, with an
    error on the file only if the catalog does not know it."""
    return {**naming(valid, artifact), "gpu_count": 0}


class OtherProcess:
    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=30)

    def submit(self, body: dict[str, Any]) -> httpx.Response:
        return self.http.post("/api/records", json=body)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def other_process(settings: Settings, tmp_path: Path) -> Iterator[OtherProcess]:
    """The app in a process of its own (its own snapshot), on the test's database."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "SERVEBOOK_RUN_WORKER": "false",
        "SERVEBOOK_SECRET_KEY": TEST_SECRET_KEY,
    }
    log = tmp_path / "uvicorn.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "app.main:create_app",
                "--factory",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        other = OtherProcess(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + START_S
        while True:
            assert server.poll() is None, log.read_text()
            try:
                if other.http.get("/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield other
        other.http.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


class TestAnotherProcess:
    def test_a_reseed_here_is_seen_by_the_other_process_at_its_next_submission(
        self, other_process: OtherProcess, settings: Settings, valid: dict
    ) -> None:
        assert other_process.submit(valid).status_code == 201  # its snapshot is loaded
        assert f"unknown artifact '{ADDED}'" in refused_artifact(
            other_process.submit(naming(valid, ADDED))
        )
        reseed(settings, ADDED, DROPPED)
        created = other_process.submit(naming(valid, ADDED))
        assert created.status_code == 201, created.text
        assert (
            other_process.http.get(f"/api/records/{created.json()['id']}").json()["artifact"]
            == ADDED
        )

    def test_a_file_removed_here_is_refused_by_the_other_process(
        self, other_process: OtherProcess, settings: Settings, valid: dict
    ) -> None:
        reseed(settings, ADDED, DROPPED)
        # The other process's snapshot now holds the file: only the GPU count is wrong.
        assert list(refused_fields(other_process.submit(known_but_invalid(valid, DROPPED)))) == [
            "gpu_count"
        ]
        remove_file(settings, DROPPED)
        message = refused_artifact(other_process.submit(naming(valid, DROPPED)))
        assert message.startswith(f"unknown artifact '{DROPPED}' for {GLM}; choose one of: ")
        assert ADDED in message and DROPPED not in message.split("choose one of: ")[1]


class TestThisProcess:
    def test_a_file_added_by_a_reseed_is_accepted_right_after_it(
        self, client: TestClient, settings: Settings, valid: dict
    ) -> None:
        refused_artifact(post_record(client, naming(valid, ADDED)))
        reseed(settings, ADDED)
        response = post_record(client, naming(valid, ADDED))
        assert response.status_code == 201, response.text

    def test_a_file_removed_by_an_edit_is_refused_right_after_it(
        self, client: TestClient, settings: Settings, valid: dict
    ) -> None:
        reseed(settings, DROPPED)
        assert list(refused_fields(post_record(client, known_but_invalid(valid, DROPPED)))) == [
            "gpu_count"
        ]
        remove_file(settings, DROPPED)
        message = refused_artifact(post_record(client, naming(valid, DROPPED)))
        assert message.startswith(f"unknown artifact '{DROPPED}' for {GLM}")


class TestTheSnapshot:
    def test_records_leave_it_in_place_and_a_seed_replaces_it(
        self, client: TestClient, session: Session, settings: Settings, valid: dict
    ) -> None:
        assert post_record(client, valid).status_code == 201
        first = catalog_references(session)
        session.rollback()
        assert post_record(client, valid).status_code == 201
        assert catalog_references(session) is first  # a record moves only the revision
        session.rollback()
        reseed(settings, ADDED)
        fresh = catalog_references(session)
        assert fresh is not first and fresh.definition == current_definition(session)
        assert ADDED in fresh.artifacts and ADDED not in first.artifacts

    def test_a_seed_that_changes_nothing_keeps_the_definition(
        self, session: Session, settings: Settings
    ) -> None:
        before = current_definition(session)
        session.rollback()
        with session_scope(settings) as seeding:
            assert not seed_catalog(seeding, load_catalog(PROJECT_ROOT / "seed_data")).changed
        assert current_definition(session) == before

    def test_it_holds_no_orm_rows(self, session: Session) -> None:
        REFERENCES.clear()
        references = catalog_references(session)
        model = references.models[GLM]
        with pytest.raises(AttributeError):
            model.slug = "changed"  # type: ignore[misc]
        assert type(model.artifacts) is tuple
        assert not hasattr(references.hardware, "__setitem__")


class TestMovedBetweenCheckAndWrite:
    """A record is checked against the snapshot with no query, and written only while the
    catalog is still at the snapshot's definition: a catalog edit committed in between
    sends it back to be checked against the catalog as it is now."""

    @pytest.fixture
    def edit_after_check(self, monkeypatch: pytest.MonkeyPatch) -> Any:
        checks: list[int] = []

        def arm(edit: Any) -> list[int]:
            real = service.validate_at_held_catalog

            def checked_then_edited(*args: Any) -> Any:
                result = real(*args)
                checks.append(result[2])
                if len(checks) == 1:
                    edit()  # committed before the write begins
                return result

            monkeypatch.setattr(service, "validate_at_held_catalog", checked_then_edited)
            return checks

        return arm

    def test_a_file_removed_in_between_is_refused_not_written(
        self,
        client: TestClient,
        settings: Settings,
        valid: dict,
        session: Session,
        edit_after_check: Any,
    ) -> None:
        reseed(settings, DROPPED)
        assert post_record(client, valid).status_code == 201  # the snapshot holds the file
        checks = edit_after_check(lambda: remove_file(settings, DROPPED))
        message = refused_artifact(post_record(client, naming(valid, DROPPED)))
        assert message.startswith(f"unknown artifact '{DROPPED}' for {GLM}")
        assert len(checks) == 1  # the second check refused it before the write
        assert session.scalar(select(func.count()).select_from(Record)) == 1

    def test_a_record_still_valid_after_the_edit_is_written_once(
        self,
        client: TestClient,
        settings: Settings,
        valid: dict,
        session: Session,
        edit_after_check: Any,
    ) -> None:
        assert post_record(client, valid).status_code == 201
        checks = edit_after_check(lambda: reseed(settings, ADDED))
        response = post_record(client, valid, key="moved")
        assert response.status_code == 201, response.text
        assert len(checks) == 2 and checks[0] != checks[1] == current_definition(session)
        assert session.scalar(select(func.count()).select_from(Record)) == 2
