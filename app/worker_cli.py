"""`servebook worker`: run queued jobs of every kind, from the database or from a dashboard.
It sits with the CLI on top of the queue: with `--sentinel` it also starts the sentinel's
version watch (app/sentinel/worker.py).

Given `--server` (or SERVEBOOK_SERVER), the worker reaches that dashboard over HTTP with a
worker token and needs no database: the way a GPU host that keeps its model server on
127.0.0.1 runs its team's jobs. Without it, the worker reads the database in DATABASE_URL.
"""

import logging
import re
import threading

import click

from app.config import get_settings
from app.jobs.job_source import SourceRefused
from app.jobs.schemas import LABEL_PATTERN, LABEL_RULE
from app.jobs.worker import JobRunner, Worker, worker_name


def check_label(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not re.fullmatch(LABEL_PATTERN, value):
        raise click.BadParameter(f"a worker label is {LABEL_RULE} (at most 100)")
    return value


@click.command()
@click.option(
    "--server",
    envvar="SERVEBOOK_SERVER",
    default=None,
    help="A dashboard's URL: claim its jobs over HTTP (env SERVEBOOK_SERVER).",
)
@click.option(
    "--token",
    envvar="SERVEBOOK_TOKEN",
    default=None,
    help="A worker access token for --server; prefer env SERVEBOOK_TOKEN, which other users "
    "of the machine cannot read from the process list.",
)
@click.option(
    "--label", default=None, callback=check_label, help="Also run jobs pinned to this label."
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    help="A host besides loopback this worker may measure (repeatable; default "
    "SERVEBOOK_BENCH_ALLOWED_HOSTS). Only with --server: the dashboard's own list applies "
    "otherwise.",
)
@click.option(
    "--lease",
    "lease_s",
    default=60.0,
    show_default=True,
    type=click.FloatRange(min=1, max=3600),
    help="Seconds a claim holds a job between renewals; a worker silent this long loses it.",
)
@click.option(
    "--poll",
    "poll_s",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0.01),
    help="Seconds between claims while there is nothing to run.",
)
@click.option("--once", is_flag=True, help="run at most one job, then exit")
@click.option(
    "--sentinel",
    is_flag=True,
    help="Also watch the runtime version the server at --base-url reports, and re-check "
    "every known-good record of --hardware once per new version (needs --label).",
)
@click.option("--base-url", default=None, help="with --sentinel: the server this worker fronts")
@click.option("--hardware", default=None, help="with --sentinel: its catalog hardware slug")
@click.option("--model", "served_model", default=None, help="with --sentinel: served model name")
@click.option(
    "--sentinel-every",
    "sentinel_every_s",
    default=300.0,
    show_default=True,
    type=click.FloatRange(min=1),
    help="Seconds between version checks.",
)
def worker(
    server: str | None,
    token: str | None,
    label: str | None,
    allow_hosts: tuple[str, ...],
    lease_s: float,
    poll_s: float,
    once: bool,
    sentinel: bool,
    base_url: str | None,
    hardware: str | None,
    served_model: str | None,
    sentinel_every_s: float,
) -> None:
    """Run queued benchmark jobs (several workers may run at once)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per poll
    if server is None and (token or allow_hosts):
        raise click.UsageError("--token and --allow-host go with --server URL")
    if sentinel:
        if server is not None:
            raise click.UsageError("--sentinel reads the database in DATABASE_URL, not --server")
        if not (base_url and hardware and label):
            raise click.UsageError("--sentinel needs --base-url, --hardware and --label")
        from app.sentinel.worker import run_sentinel_worker

        run_sentinel_worker(
            label, lease_s, poll_s, once, base_url, hardware, served_model, sentinel_every_s
        )
        return
    if server is None:
        run_from_database(label, lease_s, poll_s, once)
        return
    from app.jobs.remote import HttpJobSource

    hosts = list(allow_hosts) or get_settings().worker_hosts(label)
    try:
        source = HttpJobSource(server, token, name=worker_name(), lease_s=lease_s, label=label)
    except SourceRefused as error:
        raise click.UsageError(str(error)) from error
    runner = JobRunner(source, poll_s=poll_s, allowed_hosts=hosts)
    where = f"{server}" + (f" (label {label})" if label else "")
    click.echo(f"worker {runner.name} claiming benchmark jobs from {where}")
    try:
        drive(runner, once)
    finally:
        source.close()


def run_from_database(label: str | None, lease_s: float, poll_s: float, once: bool) -> None:
    from app.db import make_engine, make_sessionmaker

    engine = make_engine(get_settings())
    runner = Worker(make_sessionmaker(engine), lease_s=lease_s, poll_s=poll_s, label=label)
    click.echo(f"worker {runner.name} polling for benchmark jobs")
    try:
        drive(runner, once)
    finally:
        engine.dispose()


def drive(runner: JobRunner, once: bool) -> None:
    try:
        if once:
            runner.run_once()
        else:
            runner.run_forever(threading.Event())
    except SourceRefused as error:
        raise click.ClickException(str(error)) from error
    except KeyboardInterrupt:
        pass
