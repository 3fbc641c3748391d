"""The code style the project holds itself to (ruff, configured in pyproject.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ["app", "tests", "migrations"]


def ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("ruff is not installed in this environment (pip install -e '.[test]')")
    return found


def test_ruff_finds_nothing() -> None:
    result = subprocess.run([ruff(), "check", *CHECKED], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_code_is_formatted_as_ruff_formats_it() -> None:
    result = subprocess.run(
        [ruff(), "format", "--check", *CHECKED], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
