"""The image's entry script, run directly against a real PostgreSQL server: no container
engine that builds images runs on the development machine (README "Team deployment"), so
the script the image runs is what is tested, with the servebook of this checkout.

The dashboard migrates and seeds an empty database, registers the shared worker token
and serves exposed (0.0.0.0, as in the container) with it; the health check passes; a
worker with that token claims from it, one with another token is refused."""

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.config import PROJECT_ROOT
from tests.pg_server import PostgresServer
from tests.release.installed import free_port, stop, wait_until_serving

ENTRYPOINT = PROJECT_ROOT / "container" / "entrypoint.sh"
WORKER_TOKEN = "sb_" + "w" * 43

pytestmark = pytest.mark.xdist_group("container_entrypoint")


def environment(tmp_path: Path, database_url: str, port: int) -> dict[str, str]:
    kept = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("SERVEBOOK_") and name != "DATABASE_URL"
    }
    return {
        **kept,
        # `servebook` and `python` as the image has them: this checkout's, first on the PATH.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "DATABASE_URL": database_url,
        "SERVEBOOK_DATA_DIR": str(tmp_path / "data"),
        "SERVEBOOK_SECRET_KEY": "a-secret-key-for-this-test-only",
        "SERVEBOOK_RUN_WORKER": "false",
        "SERVEBOOK_ALLOWED_HOSTS": '["dashboard"]',
        "SERVEBOOK_WORKER_TOKEN": WORKER_TOKEN,
        "SERVEBOOK_PORT": str(port),
    }


def entry(env: dict[str, str], cwd: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["sh", str(ENTRYPOINT), *args],
        cwd=cwd,
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def empty_database(postgres_server: PostgresServer) -> Iterator[str]:
    name = postgres_server.create_database()
    yield postgres_server.url(name)
    postgres_server.drop_database(name)


def test_the_entry_script_runs_the_dashboard_and_a_worker(
    empty_database: str, tmp_path: Path
) -> None:
    port = free_port()
    env = environment(tmp_path, empty_database, port)
    folder = tmp_path / "workdir"
    folder.mkdir()
    assert entry(env, folder, "healthcheck").returncode == 1  # nothing serves yet

    dashboard = subprocess.Popen(
        ["sh", str(ENTRYPOINT), "dashboard"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, dashboard, timeout_s=120)
        assert entry(env, folder, "healthcheck").returncode == 0
        page = httpx.get(f"{base}/models/glm-5.3-flash", headers={"Host": "dashboard"})
        assert page.status_code == 200
        assert httpx.get(f"{base}/", headers={"Host": "elsewhere.example"}).status_code == 400
        # Exposed: a write without a token is refused even from this machine's loopback.
        assert httpx.post(f"{base}/api/records", json={}).status_code == 401

        claimed = entry(
            env, folder, "worker", "--once", SERVEBOOK_SERVER=base, SERVEBOOK_TOKEN=WORKER_TOKEN
        )
        assert claimed.returncode == 0, claimed.stderr
        assert f"claiming benchmark jobs from {base}" in claimed.stdout
        refused = entry(
            env, folder, "worker", "--once", SERVEBOOK_SERVER=base, SERVEBOOK_TOKEN="sb_" + "x" * 43
        )
        assert refused.returncode != 0 and "refused this worker" in refused.stderr
        unset = entry({**env, "SERVEBOOK_SERVER": base}, folder, "worker", "--once")
        assert unset.returncode != 0 and "SERVEBOOK_TOKEN" in unset.stderr

        # A restart registers the same token again: nothing changes.
        again = entry(
            env,
            folder,
            "token",
            "register",
            *("--role", "worker", "--name", "workers", "--from-env", "SERVEBOOK_WORKER_TOKEN"),
        )
        assert again.returncode == 0 and "already registered" in again.stdout
    finally:
        output = stop(dashboard)
    assert "database at head" in output
    assert "created" in output  # the seed
    assert "worker token for workers registered" in output
    assert list(folder.iterdir()) == []


def test_the_dashboard_gives_up_when_the_database_never_answers(tmp_path: Path) -> None:
    env = environment(tmp_path, f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/x", 0)
    answer = entry(env, tmp_path, "dashboard", SERVEBOOK_DATABASE_WAIT_S="1")
    assert answer.returncode == 1
    assert "the database did not answer; giving up" in answer.stderr


def test_the_image_runs_the_entry_script_and_its_health_check() -> None:
    """The Containerfile installs the package (resources inside) and runs this script; the
    compose file gives the dashboard and the worker what the script needs."""
    import yaml

    containerfile = (PROJECT_ROOT / "Containerfile").read_text()
    assert "COPY container/entrypoint.sh /usr/local/bin/servebook-entrypoint" in containerfile
    assert 'CMD ["servebook-entrypoint", "healthcheck"]' in containerfile
    assert 'ENTRYPOINT ["servebook-entrypoint"]' in containerfile
    assert os.access(ENTRYPOINT, os.X_OK)

    compose = yaml.safe_load((PROJECT_ROOT / "compose.yaml").read_text())["services"]
    dashboard, worker = compose["dashboard"]["environment"], compose["worker"]["environment"]
    assert compose["dashboard"]["command"] == ["dashboard"]
    assert compose["worker"]["command"][0] == "worker"
    assert dashboard["SERVEBOOK_RUN_WORKER"] == "false"
    assert (
        dashboard["DATABASE_URL"].startswith("postgresql+psycopg://")
        and "@db:" in dashboard["DATABASE_URL"]
    )
    assert {"SERVEBOOK_SECRET_KEY", "SERVEBOOK_ALLOWED_HOSTS", "SERVEBOOK_WORKER_TOKEN"} <= set(
        dashboard
    )
    assert worker["SERVEBOOK_SERVER"] == "http://dashboard:8000"
    assert '"dashboard"' in dashboard["SERVEBOOK_ALLOWED_HOSTS"]  # the worker's Host
    assert worker["SERVEBOOK_TOKEN"] == "${SERVEBOOK_WORKER_TOKEN}"
    assert shutil.which("sh")
