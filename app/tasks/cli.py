"""`servebook task import FILE`: store a task from a YAML or JSONL file."""

from pathlib import Path

import click

from app.bench.quality.task_spec import TaskFileError
from app.config import get_settings
from app.errors import ServebookError
from app.tasks.files import read_task_file


@click.group()
def task() -> None:
    """Tasks: your own prompts with checks, run by `servebook bench --task ID`."""


@task.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", default=None, help="the task's name (JSONL: default the file's name)")
@click.option("--version", "version", type=click.IntRange(1), default=None)
def import_task(path: Path, name: str | None, version: int | None) -> None:
    """Store the task in PATH (.yaml/.yml: name and prompts; .jsonl: one prompt a line).

    The same prompts under the same name are not stored twice; without --version (or a
    version in the file) a changed task becomes the next version.
    """
    from app.db import session_scope
    from app.tasks.service import TaskInvalid, parse_task, save_task

    try:
        data = read_task_file(path)
    except TaskFileError as error:
        raise click.ClickException(str(error)) from error
    overrides = {"name": name, "version": version}
    raw = {**data.model_dump(), **{k: v for k, v in overrides.items() if v is not None}}
    try:
        data = parse_task(raw)
        with session_scope(get_settings()) as session:
            stored, created = save_task(session, data)
            label = f"task #{stored.id} {stored.name} v{stored.version}"
            count = len(stored.prompts)
    except TaskInvalid as error:
        raise click.ClickException(f"{path.name}: {error.message}") from error
    except ServebookError as error:
        raise click.ClickException(error.message) from error
    click.echo(f"{'stored' if created else 'already stored'}: {label}, {count} prompts")
