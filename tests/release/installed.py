"""A servebook built from this checkout (`python -m build`: the sdist, then the wheel built
from the sdist) and installed into a fresh virtualenv outside it, as a user would.

The fresh venv has no pip and no packages of its own: a .pth file puts the test venv's
site-packages at the end of its path, as a plain folder (its own .pth files, the editable
install of this checkout among them, are not run), so the installed wheel's `app` is the
only one it imports, and pip and the dependencies come from what is already installed,
with no download.
"""

import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import venv
from dataclasses import dataclass
from pathlib import Path

import httpx

from app.config import PROJECT_ROOT

BUILD_TIMEOUT_S = 240


@dataclass(frozen=True)
class Installed:
    dist: Path
    python: Path
    servebook: Path

    @property
    def wheel(self) -> Path:
        return next(self.dist.glob("servebook-*.whl"))

    @property
    def sdist(self) -> Path:
        return next(self.dist.glob("servebook-*.tar.gz"))


def snapshot(root: Path) -> Path:
    """A copy of the checkout's files (tracked, and untracked ones git does not ignore), so
    the build reads a tree no other test writes into while it runs."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=PROJECT_ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    source = root / "source"
    for name in filter(None, listed.split("\0")):
        origin = PROJECT_ROOT / name
        if origin.is_file():
            target = source / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target)
    return source


def build_and_install(root: Path) -> Installed:
    dist = root / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(snapshot(root))],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    target = root / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "servebook-test-dependencies.pth").write_text(ours + "\n")
    wheel = next(dist.glob("servebook-*.whl"))
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
        timeout=BUILD_TIMEOUT_S,
    )
    return Installed(dist, python, target / "bin" / "servebook")


def user_environment(home: Path) -> dict[str, str]:
    """A user's environment: no DATABASE_URL, no SERVEBOOK_* settings, no PYTHONPATH into
    the checkout; their data folder (XDG_DATA_HOME) under `home`."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("SERVEBOOK_", "PYTHON", "VIRTUAL_ENV", "XDG_"))
        and name not in ("DATABASE_URL", "PROMETHEUS_MULTIPROC_DIR")
    }
    return {**kept, "HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share")}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_serving(base_url: str, server: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"servebook serve exited with {server.returncode}")
        try:
            if httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("servebook serve did not answer in time")


def stop(server: subprocess.Popen) -> str:
    server.terminate()
    try:
        output, _ = server.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        output, _ = server.communicate()
    return output
