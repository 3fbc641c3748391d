"""The release check: the built wheel, installed into a fresh virtualenv outside the
checkout, runs from an empty folder: migrations, seed, the dashboard's pages and the
estimate, with its data in the user's data folder. (About half a minute: the build and
the commands' own start-up.)"""

import json
import subprocess
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.release.installed import (
    Installed,
    build_and_install,
    free_port,
    stop,
    user_environment,
    wait_until_serving,
)

# One build per run, on one worker: the build is the slow part.
pytestmark = [pytest.mark.release, pytest.mark.xdist_group("release_wheel")]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    return build_and_install(tmp_path_factory.mktemp("release"))


@pytest.fixture
def user(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """An empty current folder and a home of its own."""
    folder = tmp_path / "empty"
    folder.mkdir()
    yield folder, user_environment(tmp_path / "home")


def run(installed: Installed, folder: Path, env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [str(installed.servebook), *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_wheel_and_the_sdist_carry_every_resource(installed: Installed) -> None:
    wheel = set(zipfile.ZipFile(installed.wheel).namelist())
    for name in (
        "app/_bundle/templates/base.html",
        "app/_bundle/static/css/app.css",
        "app/_bundle/static/vendor/SHA256SUMS",
        "app/_bundle/migrations/env.py",
        "app/_bundle/migrations/script.py.mako",
        "app/_bundle/seed_data/models.yaml",
        "app/_bundle/seed_data/tasks/code-regex.yaml",
        "app/locales/ko/LC_MESSAGES/messages.po",
        "app/locales/ja/LC_MESSAGES/messages.po",
    ):
        assert name in wheel, name
    assert any(n.startswith("app/_bundle/migrations/versions/") for n in wheel)
    assert any(n.startswith("app/_bundle/static/vendor/htmx-") for n in wheel)
    with tarfile.open(installed.sdist) as sdist:
        top = {Path(name).parts[1] for name in sdist.getnames() if len(Path(name).parts) > 1}
    assert {"app", "templates", "static", "migrations", "seed_data", "setup.py"} <= top


def test_the_installed_servebook_runs_from_an_empty_folder(
    installed: Installed, user: tuple[Path, dict[str, str]]
) -> None:
    folder, env = user
    data = Path(env["XDG_DATA_HOME"]) / "servebook"
    assert run(installed, folder, env, "--version").strip() == "servebook 0.1.0"
    assert "database at head" in run(installed, folder, env, "db", "upgrade")
    assert "created" in run(installed, folder, env, "seed")
    info = run(installed, folder, env, "info")
    assert f"data folder   {data}" in info
    assert "(installed)" in info and "current" in info

    port = free_port()
    server = subprocess.Popen(
        [str(installed.servebook), "serve", "--port", str(port)],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, server)
        home = httpx.get(f"{base}/", timeout=10)
        assert home.status_code == 200 and "GLM-5.3-Flash" in home.text
        fit = httpx.get(f"{base}/models/glm-5.3-flash", timeout=10)
        assert fit.status_code == 200 and "8x H200" in fit.text
        assert httpx.get(f"{base}/healthz", timeout=10).json() == {"status": "ok"}
        assert httpx.get(f"{base}/readyz", timeout=10).status_code == 200
        assert httpx.get(f"{base}/static/css/app.css", timeout=10).status_code == 200
        korean = httpx.get(f"{base}/?lang=ko", timeout=10)
        assert '<html lang="ko"' in korean.text
    finally:
        output = stop(server)
    assert "empty database" not in output  # it was migrated and seeded already

    estimate = json.loads(
        run(
            installed,
            folder,
            env,
            *("estimate", "--model", "glm-5.3-flash", "--hardware", "8x-h200-141gb", "--json"),
        )
    )
    assert estimate["model"] == "glm-5.3-flash"
    assert estimate["hardware"] == "8x-h200-141gb"
    assert estimate["verdict"] and estimate["commands"]

    # The catalogs' maintenance reads and writes a checkout: refused once installed.
    maintenance = subprocess.run(
        [str(installed.servebook), "i18n", "update"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert maintenance.returncode == 1 and "run them from a clone" in maintenance.stderr

    # Everything it wrote is in the user's data folder; nothing in the current one.
    assert list(folder.iterdir()) == []
    assert {"servebook.db", "secret_key"} <= {p.name for p in data.iterdir()}


def test_serve_on_an_empty_database_migrates_and_seeds_it_and_says_so(
    installed: Installed, user: tuple[Path, dict[str, str]]
) -> None:
    folder, env = user
    port = free_port()
    server = subprocess.Popen(
        [str(installed.servebook), "serve", "--port", str(port)],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, server)
        assert httpx.get(f"{base}/models/glm-5.3-flash", timeout=10).status_code == 200
        assert httpx.get(f"{base}/readyz", timeout=10).status_code == 200
    finally:
        output = stop(server)
    assert "empty database: migrated to" in output
    assert "empty catalog: seeded from" in output and "created" in output
    assert list(folder.iterdir()) == []
