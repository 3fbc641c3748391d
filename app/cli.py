"""The one console script: serve, db, seed, estimate."""

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from alembic import command
from alembic.config import Config
from sqlalchemy.orm import Session

from app.config import PROJECT_ROOT, Settings, get_settings, is_loopback
from app.db import make_engine, make_sessionmaker


def alembic_config(settings: Settings) -> Config:
    config = Config(toml_file=str(PROJECT_ROOT / "pyproject.toml"))
    config.set_main_option("sqlalchemy.url", settings.database_url)
    return config


def upgrade_database(settings: Settings, revision: str = "head") -> None:
    """Apply migrations up to `revision` on the configured database."""
    engine = make_engine(settings)
    with engine.begin() as connection:
        config = alembic_config(settings)
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
    engine.dispose()


@contextmanager
def session_scope(settings: Settings) -> Iterator[Session]:
    """A unit of work for one command: commit at the end, roll back on error."""
    engine = make_engine(settings)
    try:
        with make_sessionmaker(engine)() as session, session.begin():
            yield session
    finally:
        engine.dispose()


@click.group()
def main() -> None:
    """servebook: can I serve this model on this hardware, with which command, how fast?"""


@main.command()
@click.option("--host", default=None, help="Interface to bind (default 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default 8000).")
def serve(host: str | None, port: int | None) -> None:
    """Run the dashboard."""
    import uvicorn

    settings = get_settings()
    host = host or settings.host
    if not is_loopback(host):
        require_tokens_to_expose(settings, host)
    uvicorn.run("app.main:create_app", factory=True, host=host, port=port or settings.port)


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
    from app.catalog.seed import seed_catalog
    from app.catalog.seed_schema import SeedError, load_catalog

    settings = get_settings()
    try:
        catalog = load_catalog(seed_dir or settings.seed_dir)
    except SeedError as error:
        raise click.ClickException(str(error)) from error
    with session_scope(settings) as session:
        report = seed_catalog(session, catalog)
    click.echo(report.summary())


@main.command()
@click.option("--model", "model_slug", required=True)
@click.option("--hardware", "hardware_slug", required=True)
@click.option("--artifact", "artifact_slug", default=None)
@click.option("--runtime", "runtime_slug", default=None)
@click.option("--context", type=click.IntRange(min=1), default=None)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def estimate(
    model_slug: str,
    hardware_slug: str,
    artifact_slug: str | None,
    runtime_slug: str | None,
    context: int | None,
    as_json: bool,
) -> None:
    """Estimate memory, fit and speed of a model on a hardware configuration."""
    from app.catalog.service import CatalogService, estimate_route
    from app.errors import ServebookError

    with session_scope(get_settings()) as session:
        try:
            result = estimate_route(
                CatalogService(session),
                model_slug,
                hardware_slug,
                artifact_slug,
                runtime_slug,
                context,
            ).as_json()
        except ServebookError as error:
            raise click.ClickException(error.message) from error
    if as_json:
        json.dump(result, sys.stdout, indent=2)
        click.echo()
        return
    click.echo(format_estimate(result))


def format_estimate(result: dict) -> str:
    speed = result["decode_tokens_per_s"]
    lines = [
        f"{result['model']} on {result['hardware']}: {result['verdict']} — {result['reason']}",
        f"  route            {result['artifact']} with {result['runtime']}"
        f" ({'verified' if result['verified_pair'] else 'unverified'} pair)",
        f"  weights          {result['weights_gb']} GB",
        f"  KV cache         {result['kv_bytes_per_token']} bytes/token",
        f"  memory per GPU   {result['required_gb_per_gpu']} of {result['usable_gb_per_gpu']} GB"
        f" at {result['context']:,} tokens",
        f"  max context      {result['max_context']}",
        f"  decode           {speed['low']} ~ {speed['high']} tok/s"
        if speed
        else "  decode           unknown (no bandwidth figure)",
        f"  basis            {result['basis']} (estimated)",
    ]
    lines += [f"  warning          {w}" for w in result["warnings"]]
    return "\n".join(lines)


def register_benchmark_commands() -> None:
    from app.benchmarks.cli import bench, worker

    main.add_command(bench)
    main.add_command(worker)


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


def register_record_commands() -> None:
    from app.records.cli import import_command, token

    main.add_command(import_command)
    main.add_command(token)


register_record_commands()


if __name__ == "__main__":
    main()
