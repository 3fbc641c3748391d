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
PAGES_AND_JOBS = {"recipes", "plan", "records", "jobs", "calibrate", "sentinel", "tasks"}
# Asking the one question sits on the resolution, under the pages that ask it.
ASKING = {"asking"}
TOP = {"cli", "main", "observability", "job_kinds", "worker_cli"}
FORBIDDEN = {
    "estimate": {
        "asking",
        "catalog",
        "resolve",
        "recipes",
        "records",
        "bench",
        "jobs",
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
    "plan": {"recipes", "records", "bench", "jobs", "calibrate", "sentinel", "tasks"} | TOP,
    "recipes": {"jobs", "calibrate", "sentinel", "tasks"} | TOP,
    # The submission process builds its app with the factory the app hands it.
    "records": {"recipes", "plan", "jobs", "calibrate", "sentinel"} | TOP,
    "tasks": {"catalog", "resolve", "asking", "recipes", "plan", "jobs", "calibrate"}
    | {"sentinel"}
    | {"accuracy"}
    | TOP,
    # The queue looks kinds up; calibrations and sentinels register theirs on top of it.
    "jobs": {"resolve", "asking", "recipes", "plan", "accuracy", "calibrate", "sentinel"} | TOP,
    "calibrate": {"recipes", "plan", "sentinel", "tasks", "accuracy"} | TOP,
    "sentinel": {"catalog", "resolve", "asking", "recipes", "plan", "calibrate", "accuracy"} | TOP,
    "observability": {"catalog", "resolve", "asking", "recipes", "plan", "bench", "jobs"}
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


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(path: Path, modules: set[str]) -> set[str]:
    """The app modules a module imports, inside functions too, leaving out imports under
    `if TYPE_CHECKING:` (they never run). `from a.b import c` is module `a.b.c` when there
    is one, else `a.b`."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app"):
            for alias in node.names:
                named = f"{node.module}.{alias.name}"
                found.add(named if named in modules else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("app")}
    return found & modules


def import_circles(root: Path) -> list[list[str]]:
    """Every circle of imports among the modules under `root` (Tarjan's strongly connected
    components of more than one module, or of a module that imports itself)."""
    paths = {module_name(path, root): path for path in root.rglob("*.py")}
    graph = {name: module_imports(path, set(paths)) for name, path in paths.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for other in graph[name]:
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == name:
                    break
            if len(component) > 1 or name in graph[name]:
                circles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return circles


def test_no_module_imports_one_that_imports_it_back() -> None:
    """A circle of imports, even one closed inside a function, makes two modules one: each
    needs the other to be read. The ORM models may refer to each other (`app.models`)."""
    circles = [c for c in import_circles(APP) if not all(m.startswith("app.models") for m in c)]
    assert circles == []


def test_the_circle_checker_finds_a_circle_closed_inside_a_function(tmp_path: Path) -> None:
    root = tmp_path / "app"
    (root / "a").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "a" / "__init__.py").write_text("")
    (root / "a" / "one.py").write_text("from app.a.two import f\n")
    (root / "a" / "two.py").write_text("def f():\n    from app.a import one\n")
    (root / "a" / "three.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.a.one import f\n"
    )
    (root / "a" / "four.py").write_text("from app.a.three import x\n")
    assert import_circles(root) == [["app.a.one", "app.a.two"]]


# The estimator's rooms, bottom up: inputs, then memory, then ranges and speed, then the
# estimator's top (`estimator`, `fit`, `catalog_pass`, `calibration`) over them all.
ESTIMATE_TOP = {"estimator", "fit", "catalog_pass", "calibration", "cautions", "checked_plan"}
ESTIMATE_ROOMS = {
    "inputs": {"memory", "speed", "ranges"} | ESTIMATE_TOP,
    "memory": {"speed", "ranges"} | ESTIMATE_TOP,
    "ranges": {"inputs", "memory", "speed"} | ESTIMATE_TOP,
    "speed": ESTIMATE_TOP,
}


@pytest.mark.parametrize("room", sorted(ESTIMATE_ROOMS))
def test_each_room_of_the_estimator_imports_only_those_below_it(room: str) -> None:
    assert room_offenders("estimate", room, ESTIMATE_ROOMS[room]) == {}


def test_every_room_of_the_estimator_has_a_rule() -> None:
    rooms = {path.parent.name for path in (APP / "estimate").glob("*/__init__.py")}
    assert rooms == set(ESTIMATE_ROOMS)


# The records' rooms, bottom up: the schema, then comparison and storage, then evidence and
# the importers, then review, with the endpoints on top.
RECORD_ROOMS = {
    "comparison": {"storage", "evidence", "importers", "review", "endpoints", "export"},
    "storage": {"comparison", "evidence", "importers", "review", "endpoints", "export"},
    "evidence": {"importers", "review", "endpoints", "export"},
    "importers": {"comparison", "evidence", "review", "endpoints", "export"},
    "review": {"importers", "endpoints", "export"},
    "endpoints": set(),
}


def room_offenders(package: str, room: str, forbidden: set[str]) -> dict[str, list[str]]:
    """Each module of `app.<package>.<room>` with the imports of rooms it may not import."""
    modules = {module_name(path, APP) for path in APP.rglob("*.py")}
    prefix = f"app.{package}."
    offenders = {
        module_name(path, APP): sorted(
            name
            for name in module_imports(path, modules)
            if name.startswith(prefix) and name.split(".")[2] in forbidden
        )
        for path in (APP / package / room).rglob("*.py")
    }
    return {name: found for name, found in offenders.items() if found}


@pytest.mark.parametrize("room", sorted(RECORD_ROOMS))
def test_each_room_of_the_records_imports_only_those_below_it(room: str) -> None:
    assert room_offenders("records", room, RECORD_ROOMS[room]) == {}


def test_every_room_of_the_records_has_a_rule() -> None:
    rooms = {path.parent.name for path in (APP / "records").glob("*/__init__.py")}
    assert rooms == set(RECORD_ROOMS)


# The benchmark client's rooms, bottom up: the transport, then one stream; the quality
# checks beside them, pure of the network; the stages over all three.
BENCH_ROOMS = {
    "transport": {"stream", "quality", "stages"},
    "stream": {"quality", "stages"},
    "quality": {"transport", "stream", "stages"},
    "stages": set(),
}


@pytest.mark.parametrize("room", sorted(BENCH_ROOMS))
def test_each_room_of_the_benchmark_client_imports_only_those_below_it(room: str) -> None:
    assert room_offenders("bench", room, BENCH_ROOMS[room]) == {}


def test_every_room_of_the_benchmark_client_has_a_rule() -> None:
    rooms = {path.parent.name for path in (APP / "bench").glob("*/__init__.py")}
    assert rooms == set(BENCH_ROOMS)


def test_the_readme_names_every_package() -> None:
    readme = (APP.parent / "README.md").read_text()
    layout = readme[readme.index("## Layout") :]
    packages = {path.parent.name for path in APP.glob("*/__init__.py")}
    assert {name for name in packages if f"`app/{name}/`" not in layout} == set()


# The layout's own rules: rooms small enough to read, names that say what a module holds,
# files a reader takes in whole, each opening with what it holds.
MAX_MODULES_PER_FOLDER = 20
MAX_LINES = 400
VAGUE_NAMES = {"shared", "setup", "misc", "utils", "util", "common", "helpers", "stuff"}


def app_folders() -> list[Path]:
    return [APP, *(p for p in APP.rglob("*") if p.is_dir() and p.name != "__pycache__")]


def test_no_folder_holds_more_than_twenty_modules() -> None:
    crowded = {
        str(folder.relative_to(APP.parent)): count
        for folder in app_folders()
        if (count := len([p for p in folder.glob("*.py") if p.name != "__init__.py"]))
        > MAX_MODULES_PER_FOLDER
    }
    assert crowded == {}


def test_no_module_or_folder_has_a_vague_name() -> None:
    vague = [
        str(path.relative_to(APP.parent))
        for path in [*APP.rglob("*.py"), *app_folders()]
        if path.stem in VAGUE_NAMES
    ]
    assert vague == []


def test_every_module_is_under_four_hundred_lines_and_opens_with_a_docstring() -> None:
    long = {}
    undocumented = []
    for path in APP.rglob("*.py"):
        text = path.read_text()
        if len(text.splitlines()) >= MAX_LINES:
            long[str(path.relative_to(APP.parent))] = len(text.splitlines())
        if ast.get_docstring(ast.parse(text)) is None:
            undocumented.append(str(path.relative_to(APP.parent)))
    assert long == {}
    assert undocumented == []
