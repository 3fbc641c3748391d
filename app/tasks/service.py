"""Create, find and describe tasks; the caller commits."""

from collections.abc import Sequence
from datetime import UTC
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.bench.quality.task_spec import STORED, TaskSpec
from app.bench.quality.task_spec import TaskPrompt as PromptSpec
from app.errors import Conflict, NotFound
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.models import Task, TaskPrompt
from app.records.storage.validation import RecordInvalid, schema_errors
from app.tasks.schemas import TaskIn


class TaskInvalid(RecordInvalid):
    """422 with every field error of a task at once."""


VERSION_TAKEN = register(
    "task.version_taken",
    _l("task '%(name)s' version %(version)s is stored with other prompts; give a new version"),
)
NO_TASK = register("task.not_found", _l("No task %(task)s."))


def parse_task(raw: Any) -> TaskIn:
    try:
        return TaskIn.model_validate(raw)
    except ValidationError as error:
        raise TaskInvalid(schema_errors(error)) from error


def save_task(session: Session, data: TaskIn, created_by: str = "local") -> tuple[Task, bool]:
    """(the task, whether it is new). Same name and prompts as a stored version: that one.

    An explicit version that is stored with other prompts is refused (409): a version
    always means the same prompts, so results that name it stay comparable.
    """
    versions = list(session.scalars(select(Task).where(Task.name == data.name)))
    same = [task for task in versions if same_content(task, data)]
    if data.version is not None:
        stored = next((task for task in versions if task.version == data.version), None)
        if stored is not None:
            if stored in same:
                return stored, False
            raise Conflict(VERSION_TAKEN(name=data.name, version=str(data.version)))
        version = data.version
    else:
        if same:
            return max(same, key=lambda task: task.version), False
        version = max((task.version for task in versions), default=0) + 1
    task = Task(
        name=data.name,
        version=version,
        description=data.description,
        source=data.source,
        max_tokens=data.max_tokens,
        created_by=created_by,
        prompts=[
            TaskPrompt(
                position=position,
                prompt=item.prompt,
                check=item.check.model_dump(),
                max_tokens=item.max_tokens,
            )
            for position, item in enumerate(data.prompts)
        ],
    )
    session.add(task)
    session.flush()
    return task, True


def same_content(task: Task, data: TaskIn) -> bool:
    return task.max_tokens == data.max_tokens and [
        prompt_spec(prompt) for prompt in task.prompts
    ] == list(data.prompts)


def prompt_spec(prompt: TaskPrompt) -> PromptSpec:
    return PromptSpec.model_validate(
        {"prompt": prompt.prompt, "check": prompt.check, "max_tokens": prompt.max_tokens},
        context={STORED: True},
    )


def get_task(session: Session, task_id: int) -> Task:
    task = session.get(Task, task_id)
    if task is None:
        raise NotFound(NO_TASK(task=str(task_id)))
    return task


def list_tasks(session: Session) -> Sequence[Task]:
    return session.scalars(select(Task).order_by(Task.name, Task.version.desc())).all()


def task_count(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Task)) or 0


def task_spec(task: Task) -> TaskSpec:
    """What the benchmark runs: the stored prompts with their checks."""
    return TaskSpec(
        id=task.id,
        name=task.name,
        version=task.version,
        description=task.description,
        source=task.source,
        max_tokens=task.max_tokens,
        prompts=[prompt_spec(prompt) for prompt in task.prompts],
    )


def task_out(task: Task, url: str) -> dict[str, Any]:
    return {
        "id": task.id,
        "name": task.name,
        "version": task.version,
        "description": task.description,
        "source": task.source,
        "max_tokens": task.max_tokens,
        "prompts": [prompt_spec(prompt).model_dump(exclude_none=True) for prompt in task.prompts],
        "created_by": task.created_by,
        # SQLite hands back naive datetimes; every stored time is UTC.
        "created_at": task.created_at.replace(tzinfo=task.created_at.tzinfo or UTC),
        "url": url,
    }


def task_summary(task: Task, url: str) -> dict[str, Any]:
    kinds = dict.fromkeys(prompt_spec(prompt).check.kind for prompt in task.prompts)
    return {
        "id": task.id,
        "name": task.name,
        "version": task.version,
        "description": task.description,
        "prompt_count": len(task.prompts),
        "checks": list(kinds),
        "url": url,
    }
