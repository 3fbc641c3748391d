"""`servebook task import` (YAML and JSONL) and the example tasks `servebook seed` loads."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cli import main
from app.config import PROJECT_ROOT
from app.models import Task
from app.tasks.seed import read_seed_tasks
from tests.catalog.test_seed_loader import seed

LINES = [
    {"prompt": "Capital of France?", "check": {"contains": "Paris"}},
    {"prompt": "2 + 2?", "check": {"number": 4, "tolerance": 0.5}},
]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["task", "import", *args])


def write_jsonl(path: Path, lines: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def stored(session: Session) -> list[tuple[str, int, int]]:
    session.expire_all()
    return [(t.name, t.version, len(t.prompts)) for t in session.scalars(select(Task))]


def test_jsonl_file_is_stored_under_its_name_once(
    cli_database: Path, session: Session, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "capitals.jsonl", LINES)
    first = run(str(path))
    assert first.exit_code == 0, first.output
    assert "stored: task #1 capitals v1, 2 prompts" in first.output
    again = run(str(path))
    assert again.exit_code == 0 and "already stored: task #1 capitals v1" in again.output
    renamed = run(str(path), "--name", "geo", "--version", "4")
    assert "stored: task #2 geo v4" in renamed.output
    assert stored(session) == [("capitals", 1, 2), ("geo", 4, 2)]


def test_yaml_file_keeps_its_description_and_source(cli_database: Path, session: Session) -> None:
    result = run(str(PROJECT_ROOT / "seed_data" / "tasks" / "code-regex.yaml"))
    assert result.exit_code == 0, result.output
    [task] = session.scalars(select(Task)).all()
    assert task.source.startswith("Prompts written for servebook")
    assert [prompt.check.keys() == {"regex"} for prompt in task.prompts] == [True] * 3


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "bad.jsonl",
            '{"prompt": "q", "check": {"contains": "a"}}\nnot json\n',
            "line 2: not JSON",
        ),
        ("bad.jsonl", '{"prompt": "q", "check": {"regex": "("}}\n', "line 1: check.regex"),
        ("bad.jsonl", '{"prompt": "q"}\n', "line 1: check: Field required"),
        ("empty.jsonl", "\n\n", "prompts: List should have at least 1 item"),
        ("bad.yaml", "name: x\nprompts: [{prompt: q, check: {number: four}}]\n", "number"),
        ("bad.yaml", "- just a list\n", "expected a mapping with name and prompts"),
        ("bad.yaml", "name: [unclosed\n", "not YAML"),
        ("task.txt", "anything", "give a .yaml, .yml or .jsonl file"),
    ],
)
def test_bad_files_are_refused_naming_the_line_or_field(
    cli_database: Path, session: Session, tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    result = run(str(path))
    assert result.exit_code == 1
    assert message in result.output
    assert stored(session) == []


def test_seed_loads_the_example_tasks_once(empty_db: Path, seed_copy: Path) -> None:
    first = seed(seed_copy)
    assert first.startswith("0:")
    assert "tasks created: code-regex v1, extraction-schema v1, long-document-qa v1" in first
    assert seed(seed_copy) == "0:catalog already up to date\n"


def test_a_broken_task_file_stops_the_seed_before_any_write(
    empty_db: Path,
    seed_copy: Path,
) -> None:
    (seed_copy / "tasks" / "zz-broken.yaml").write_text("name: x\nprompts: []\n")
    result = seed(seed_copy)
    assert result.startswith("1:") and "zz-broken.yaml: prompts" in result
    assert "created" not in result


def test_every_example_task_has_a_source_and_each_kind_of_check() -> None:
    tasks = read_seed_tasks(PROJECT_ROOT / "seed_data" / "tasks")
    assert all("written for servebook" in task.source for task in tasks)
    kinds = {prompt.check.kind for task in tasks for prompt in task.prompts}
    assert kinds == {"equals", "contains", "regex", "json_schema", "number"}
