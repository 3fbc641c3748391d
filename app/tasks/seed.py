"""The example tasks in ``seed_data/tasks/``, loaded by ``servebook seed``.

Every file is read and checked before the first write; a stored task with the same name
and prompts is left alone, so a second run changes nothing.
"""

from pathlib import Path

from sqlalchemy.orm import Session

from app.tasks.files import read_task_file
from app.tasks.schemas import TaskIn
from app.tasks.service import save_task

TASK_SUFFIXES = (".yaml", ".yml", ".jsonl")


def read_seed_tasks(directory: Path) -> list[TaskIn]:
    """Every task file in ``directory`` (none when it does not exist), in name order."""
    if not directory.is_dir():
        return []
    files = sorted(path for path in directory.iterdir() if path.suffix in TASK_SUFFIXES)
    return [read_task_file(path) for path in files]


def seed_tasks(session: Session, tasks: list[TaskIn]) -> list[str]:
    """Store the tasks not yet stored (the caller commits); the labels of those created."""
    created = []
    for data in tasks:
        task, is_new = save_task(session, data, created_by="seed")
        if is_new:
            created.append(f"{task.name} v{task.version}")
    return created
