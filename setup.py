"""The build hook: copy the top-level resource folders into the package as it is built.

templates/, static/, migrations/ and seed_data/ stay at the top of the repository (where
`make run`, the tests and the reviewers read them); a wheel, and a wheel built from the
sdist, carries them as app/_bundle/<folder>, where app/resources.py finds them once
installed. The sdist itself carries the folders as they are (MANIFEST.in).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUNDLED_FOLDERS = ("templates", "static", "migrations", "seed_data")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc")


class BuildPyWithResources(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the checkout's own folders
            return
        bundle = Path(self.build_lib) / "app" / "_bundle"
        for folder in BUNDLED_FOLDERS:
            target = bundle / folder
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(ROOT / folder, target, ignore=SKIPPED)


setup(cmdclass={"build_py": BuildPyWithResources})
