"""The one console script: serve, db, seed, estimate."""

from pathlib import Path

import click
from alembic import command
from sqlalchemy.exc import DBAPIError

from app.config import Settings, get_settings, is_loopback
from app.db import alembic_config, session_scope, upgrade_database

# SQLite's words for a missing table, and PostgreSQL's SQLSTATE for it.
MISSING_TABLE_TEXT = "no such table"
MISSING_TABLE_STATE = "42P01"


def _missing_tables(error: DBAPIError) -> bool:
    state = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None)
    return state == MISSING_TABLE_STATE or MISSING_TABLE_TEXT in str(error.orig)


class ServebookCommands(click.Group):
    """The command group. A command run before the database has its tables (a first
    `servebook plan` before any `servebook serve`) says what to run, not a database error."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except DBAPIError as error:
            if not _missing_tables(error):
                raise
            from app.installation import shown_url

            url = shown_url(get_settings().database_url)
            raise click.ClickException(
                f"the database {url} has no servebook tables yet: run `servebook serve`, "
                "which migrates and seeds an empty database, or `servebook db upgrade` "
                "then `servebook seed`"
            ) from None


@click.group(cls=ServebookCommands)
@click.version_option(
    package_name="servebook", prog_name="servebook", message="%(prog)s %(version)s"
)
def main() -> None:
    """servebook: can I serve this model on this hardware, with which command, how fast?"""


@main.command()
@click.option("--host", default=None, help="Interface to bind (default 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default 8000).")
def serve(host: str | None, port: int | None) -> None:
    """Run the dashboard."""
    import uvicorn

    from app.catalog.seed_schema import SeedError
    from app.installation import prepare_database

    settings = get_settings()
    host = host or settings.host
    try:
        for done in prepare_database(settings):
            click.echo(done)
    except SeedError as error:
        raise click.ClickException(str(error)) from error
    if not is_loopback(host):
        require_tokens_to_expose(settings, host)
    # The app reads forwarding headers itself, from SERVEBOOK_TRUSTED_PROXIES alone.
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=host,
        port=port or settings.port,
        proxy_headers=False,
    )


@main.group()
def db() -> None:
    """Database schema commands."""


@db.command("upgrade")
@click.argument("revision", default="head")
def db_upgrade(revision: str) -> None:
    """Apply migrations (default: up to head)."""
    upgrade_database(get_settings(), revision)
    click.echo(f"database at {revision}")


@db.command("downgrade")
@click.argument("revision")
def db_downgrade(revision: str) -> None:
    """Revert migrations down to REVISION (e.g. base)."""
    command.downgrade(alembic_config(get_settings()), revision)


@db.command("check")
def db_check() -> None:
    """Fail if the ORM models and the migrations disagree."""
    command.check(alembic_config(get_settings()))


@main.command()
@click.option("--dir", "seed_dir", type=click.Path(path_type=Path, file_okay=False), default=None)
def seed(seed_dir: Path | None) -> None:
    """Load the YAML catalog; a second run changes nothing."""
    from app.bench.quality.task_spec import TaskFileError
    from app.catalog.seed_schema import SeedError
    from app.installation import seed_from

    try:
        summary, created_tasks = seed_from(get_settings(), seed_dir)
    except (SeedError, TaskFileError) as error:
        raise click.ClickException(str(error)) from error
    click.echo(summary)
    if created_tasks:
        click.echo(f"tasks created: {', '.join(created_tasks)}")


def register_benchmark_commands() -> None:
    from app import job_kinds  # noqa: F401 - the workers and queues below run every kind
    from app.jobs.cli import bench
    from app.worker_cli import worker

    main.add_command(bench)
    main.add_command(worker)
    from app.plan.cli import plan
    from app.sentinel.cli import sentinel

    main.add_command(sentinel)
    from app.tasks.cli import task

    main.add_command(plan)
    main.add_command(task)
    from app.calibrate.cli import calibrate

    main.add_command(calibrate)


register_benchmark_commands()


def require_tokens_to_expose(settings: Settings, host: str) -> None:
    """Beyond loopback, refuse to start without an access token; the app then sees the host."""
    import os

    from app.security import ExposedWithoutTokens, check_exposure

    exposed = settings.model_copy(update={"host": host})
    with session_scope(exposed) as session:
        try:
            check_exposure(exposed, session)
        except ExposedWithoutTokens as error:
            raise click.ClickException(str(error)) from None
    os.environ["SERVEBOOK_HOST"] = host
    get_settings.cache_clear()


@main.command()
def info() -> None:
    """Print the version, the data folder, the database (password hidden) and its revisions."""
    from app.installation import installation_lines

    click.echo("\n".join(installation_lines(get_settings())))


def register_estimate_command() -> None:
    from app.recipes.estimate_cli import estimate

    main.add_command(estimate)


register_estimate_command()


def register_record_commands() -> None:
    from app.records.endpoints.cli import import_command, token

    main.add_command(import_command)
    main.add_command(token)


register_record_commands()


def register_i18n_commands() -> None:
    from app.i18n.cli import i18n

    main.add_command(i18n)


register_i18n_commands()


if __name__ == "__main__":
    main()
