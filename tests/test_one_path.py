"""One question, one path: every speed, first token and throughput a surface shows comes
from the step model through the one resolution (`app.resolve`), never from a surface's own
call into the estimator's speed functions. Read from the source (no import runs)."""

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app"

# The step model's figure functions: whoever calls them computes a speed.
FIGURES = {
    "app.estimate.speed.load": {"load_estimate", "single_request"},
    "app.estimate.speed.step": {"decode_step", "prefill_seconds", "communication_s"},
    "app.estimate.speed.scored": {"point_estimate"},
}
# Who may: the resolution's load lines, its offloaded route and its advice (which weighs a
# change by the same lines); calibration, which fits the step model to a server's timings;
# and the accuracy page, which scores the point estimate against published measurements.
ALLOWED = {
    "resolve/loads.py",
    "resolve/offloaded.py",
    "resolve/advice.py",
    "calibrate/service.py",
    "accuracy/snapshot.py",
}
# The roofline that once computed speeds beside the step model is gone.
RETIRED = {"decode_range", "prefill_range", "DecodeLoad"}


def speed_calls(path: Path) -> set[str]:
    """The step model's figure functions a module imports, at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module in FIGURES:
            found |= {a.name for a in node.names} & FIGURES[node.module]
    return found


def test_no_surface_computes_a_speed_outside_the_one_path() -> None:
    offenders = {
        str(path.relative_to(APP)): sorted(speed_calls(path))
        for path in APP.rglob("*.py")
        if path.relative_to(APP).parts[0] != "estimate"
        and str(path.relative_to(APP)) not in ALLOWED
        and speed_calls(path)
    }
    assert offenders == {}


def test_the_checker_sees_a_surface_that_computes_its_own_speed(tmp_path: Path) -> None:
    module = tmp_path / "page.py"
    module.write_text(
        "def figure(model):\n"
        "    from app.estimate.speed.load import load_estimate\n"
        "    return load_estimate(model, 8)\n"
    )
    assert speed_calls(module) == {"load_estimate"}


def test_the_roofline_is_retired() -> None:
    names = {
        node.name
        for path in (APP / "estimate").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.ClassDef)
    }
    assert names & RETIRED == set()


# Who resolves a question: the one door surfaces ask through (`app.asking.answer.ask`), and
# the resolution's own fit table, its named-route lookup and the records review, which ask
# the table's questions again with other evidence.
RESOLVERS = {
    "asking/answer.py",
    "resolve/fit_table.py",
    "resolve/service.py",
    "resolve/__init__.py",
    "resolve/recipe.py",
    "records/review/consequences.py",
}


def resolves(path: Path) -> bool:
    """Whether a module imports `resolve_recipe`, at any depth of the file."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module in (
            "app.resolve",
            "app.resolve.recipe",
        ):
            if any(a.name == "resolve_recipe" for a in node.names):
                return True
    return False


def test_every_surface_asks_through_the_one_door() -> None:
    offenders = sorted(
        str(path.relative_to(APP))
        for path in APP.rglob("*.py")
        if str(path.relative_to(APP)) not in RESOLVERS and resolves(path)
    )
    assert offenders == []


def test_the_door_checker_sees_a_surface_that_resolves_on_its_own(tmp_path: Path) -> None:
    module = tmp_path / "page.py"
    module.write_text("def answer(inputs, q):\n    from app.resolve import resolve_recipe\n")
    assert resolves(module)


def test_the_question_is_typed_from_every_reader() -> None:
    """The API's request, the selector's form and the plan each build a `Question`, not a
    dict of fields handed on to another reader."""
    for reader in ("asking/ask.py", "asking/form.py", "plan/service.py"):
        tree = ast.parse((APP / reader).read_text())
        built = {
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        assert "Question" in built, reader
    # Only the form reads the form's fields: nothing else hands fields on to it.
    readers = sorted(
        str(path.relative_to(APP))
        for path in APP.rglob("*.py")
        if "QuestionForm" in path.read_text()
    )
    assert readers == ["asking/form.py"]
