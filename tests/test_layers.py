"""Import directions between the packages of app/, read from the source (no import runs).

The estimator is pure; the catalog knows nothing of recipes, records or pages; the one
resolution (`app.resolve`) reads the catalog and the estimator and is read by the pages,
the records review and the CLI, never the other way round.
"""

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"

# package -> app packages it must never import
FORBIDDEN = {
    "estimate": {
        "catalog",
        "resolve",
        "recipes",
        "records",
        "bench",
        "benchmarks",
        "models",
        "db",
        "cli",
        "security",
    },
    "catalog": {"resolve", "recipes", "records", "bench", "benchmarks", "cli"},
    "resolve": {"recipes", "records", "bench", "benchmarks", "cli"},
    "records": {"recipes", "cli"},
    # A plan asks the estimate's own request path (app.recipes) and answers alone.
    "plan": {"records", "bench", "benchmarks", "cli"},
    "bench": {"catalog", "resolve", "recipes", "records", "benchmarks", "models", "db", "cli"},
}


def app_imports(path: Path) -> set[str]:
    """The top-level app packages a module imports, at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("app.")}
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_keeps_its_import_direction(package: str) -> None:
    offenders = {
        str(path.relative_to(APP)): sorted(app_imports(path) & FORBIDDEN[package])
        for path in (APP / package).rglob("*.py")
        if app_imports(path) & FORBIDDEN[package]
    }
    assert offenders == {}


def test_the_checker_sees_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from app.recipes.knobs import knob_rows\n")
    assert app_imports(module) == {"recipes"}
