"""`servebook worker --sentinel`: the database worker with a version watch beside it. The
watch queues re-checks pinned to this worker's label; the worker's own loop runs them."""

import threading
from urllib.parse import urlsplit

import click

from app.config import get_settings
from app.jobs.worker import Worker
from app.sentinel.watch import SentinelWatch


def run_sentinel_worker(
    label: str,
    lease_s: float,
    poll_s: float,
    once: bool,
    base_url: str,
    hardware: str,
    served_model: str | None,
    every_s: float,
) -> None:
    from app.db import make_engine, make_sessionmaker

    settings = get_settings()
    engine = make_engine(settings)
    sessions = make_sessionmaker(engine)
    # The server this worker fronts is named on its own command line: it measures that host.
    hosts = [*settings.worker_hosts(label), urlsplit(base_url).hostname or ""]
    runner = Worker(sessions, lease_s=lease_s, poll_s=poll_s, label=label, allowed_hosts=hosts)
    watch = SentinelWatch(sessions, settings, hardware, base_url, label, served_model)
    click.echo(f"worker {runner.name} watching {base_url} for new runtime versions ({hardware})")
    stop = threading.Event()
    try:
        if once:  # one look at the version, then every job it queued
            watch.tick()
            while runner.run_once():
                pass
            return
        thread = threading.Thread(target=runner.run_forever, args=(stop,), daemon=True)
        thread.start()
        while not stop.is_set():
            watch.tick()
            stop.wait(every_s)
    except (KeyboardInterrupt, ValueError) as error:
        if isinstance(error, ValueError):
            raise click.ClickException(str(error)) from error
    finally:
        stop.set()
        engine.dispose()
