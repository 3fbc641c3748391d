"""Where the files beside the code are found: the templates, static files, migrations and
seed data.

In a source checkout (``make run``, an editable install, the tests) they are the top-level
folders of the checkout. An installed wheel or sdist carries copies of them inside the
package, under ``app/_bundle/`` (put there by the build hook in ``setup.py``), since a
site-packages folder has no room for top-level folders of its own.
"""

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
CHECKOUT_ROOT = PACKAGE_DIR.parent
BUNDLE_DIR = PACKAGE_DIR / "_bundle"

# The folders the build hook copies into the package, by name (the same in both places).
BUNDLED_FOLDERS = ("templates", "static", "migrations", "seed_data")


def runs_from_checkout(root: Path = CHECKOUT_ROOT) -> bool:
    """True when the package is imported from a source checkout: its pyproject.toml and
    seed data stand beside it. Installed into site-packages, neither does."""
    return (root / "pyproject.toml").is_file() and (root / "seed_data").is_dir()


FROM_CHECKOUT = runs_from_checkout()
RESOURCE_ROOT = CHECKOUT_ROOT if FROM_CHECKOUT else BUNDLE_DIR

TEMPLATES_DIR = RESOURCE_ROOT / "templates"
STATIC_DIR = RESOURCE_ROOT / "static"
MIGRATIONS_DIR = RESOURCE_ROOT / "migrations"
SEED_DIR = RESOURCE_ROOT / "seed_data"
