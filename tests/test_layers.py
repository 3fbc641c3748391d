"""Import directions between the packages of app/, read from the source (no import runs).

The estimator is pure; the catalog knows nothing of recipes, records or pages; the one
resolution (`app.resolve`) reads the catalog and the estimator; asking the one question
(`app.asking`) reads every surface's request into it and resolves it, for the pages, the
plan and the CLI, never the other way round.
"""

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"

# package -> app packages it must never import. Every package of app/ has a rule (see
# `test_every_package_has_a_rule`); the layers run estimate and i18n at the bottom, then the
# catalog and the resolution, then the pages and the jobs, with the CLI and the app on top.
PAGES_AND_JOBS = {"recipes", "plan", "records", "benchmarks", "calibrate", "sentinel", "tasks"}
# Asking the one question sits on the resolution, under the pages that ask it.
ASKING = {"asking"}
TOP = {"cli", "main", "observability"}
FORBIDDEN = {
    "estimate": {
        "asking",
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
        "i18n",
        "accuracy",
        "calibrate",
        "sentinel",
        "tasks",
        "plan",
        "observability",
        "main",
    },
    "i18n": {"catalog", "resolve", "bench", "models", "db", "security", "accuracy", "web"}
    | ASKING
    | PAGES_AND_JOBS
    | TOP,
    "models": {"catalog", "resolve", "bench", "security", "accuracy", "i18n", "estimate", "web"}
    | ASKING
    | PAGES_AND_JOBS
    | TOP,
    "security": {"catalog", "resolve", "bench", "accuracy"} | ASKING | PAGES_AND_JOBS | TOP,
    "catalog": {"resolve", "bench", "accuracy"} | ASKING | PAGES_AND_JOBS | TOP,
    "accuracy": {"resolve", "bench"} | ASKING | PAGES_AND_JOBS | TOP,
    "resolve": {"bench"} | ASKING | PAGES_AND_JOBS | TOP,
    # Reading every surface's request into the one question, and asking it once.
    "asking": {"bench"} | PAGES_AND_JOBS | TOP,
    # A plan asks the estimate's own question (app.asking) and answers alone; the pages of
    # recipes may show a plan's figures (the fit table's load column), never the reverse.
    "plan": {"recipes", "records", "bench", "benchmarks", "calibrate", "sentinel", "tasks"} | TOP,
    "recipes": {"benchmarks", "calibrate", "sentinel", "tasks"} | TOP,
    # The submission process builds its app with the factory the app hands it.
    "records": {"recipes", "plan", "benchmarks", "calibrate", "sentinel"} | TOP,
    "tasks": {"catalog", "resolve", "asking", "recipes", "plan", "benchmarks", "calibrate"}
    | {"sentinel"}
    | {"accuracy"}
    | TOP,
    "benchmarks": {"resolve", "asking", "recipes", "plan", "accuracy"} | TOP,
    "calibrate": {"recipes", "plan", "sentinel", "tasks", "accuracy"} | TOP,
    "sentinel": {"catalog", "resolve", "asking", "recipes", "plan", "calibrate", "accuracy"} | TOP,
    "observability": {"catalog", "resolve", "asking", "recipes", "plan", "bench", "benchmarks"}
    | {"calibrate", "sentinel", "tasks", "accuracy", "cli", "main"},
    "bench": {"catalog", "resolve", "asking", "accuracy", "models", "db"} | PAGES_AND_JOBS | TOP,
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


def test_every_package_has_a_rule() -> None:
    packages = {path.parent.name for path in APP.glob("*/__init__.py")}
    assert packages - set(FORBIDDEN) == set()
