"""`servebook sentinel`: re-run a known-good record's plan against a server and say whether
the runtime on it regressed."""

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from app.bench.procedure import TargetUnreachable
from app.bench.transport.hosts import HostNotAllowedError
from app.config import get_settings
from app.jobs.worker import API_KEY_ENV
from app.sentinel.report import Change
from app.sentinel.spread import BASELINE_RUNS, TRIM_FROM

EXIT_REGRESSED = 1
EXIT_UNREACHABLE = 3  # nothing answered: nothing measured, written or stored
EXIT_NOT_STORED = 4  # measured, but the record was refused


class Unreachable(click.ClickException):
    exit_code = EXIT_UNREACHABLE


class NotStored(click.ClickException):
    exit_code = EXIT_NOT_STORED


def change_line(change: Change) -> str:
    if change.change is None:
        return f"{change.metric} ({change.point}): {change.baseline} -> {change.now}"
    pct = f" ({change.change_pct:+.1f} %)" if change.change_pct is not None else ""
    mark = f" {change.direction}, beyond noise" if change.significant else ""
    return (
        f"{change.metric} at {change.point}: {change.baseline:,.3g} -> {change.now:,.3g} "
        f"{change.unit}{pct}{mark}"
    )


@click.command()
@click.option("--record", "record_id", required=True, type=click.IntRange(1))
@click.option("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
@click.option(
    "--model", "served_model", default=None, help="default: the record's, or the server's first"
)
@click.option("--metrics-url", default=None, help="Prometheus /metrics of the server")
@click.option("--api-key", envvar=API_KEY_ENV, default=None, help=f"or ${API_KEY_ENV}")
@click.option("--json", "json_path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--timeout", "request_timeout_s", type=float, default=None)
@click.option(
    "--rebaseline",
    is_flag=True,
    help="name this run as the baseline from now on (when the record's decode was not "
    "measurable, say), rather than judge it",
)
@click.option(
    "--baseline-runs",
    type=click.IntRange(2, 10),
    default=None,
    help="with --rebaseline: how many runs the new baseline's bands hold, so that they "
    "hold how far a fresh run moves against the same server as well as one run's "
    f"repeats (default {BASELINE_RUNS}; from {TRIM_FROM} on, each figure leaves out the run "
    "farthest from the runs' median)",
)
@click.option(
    "--no-confirm",
    is_flag=True,
    help="judge a regression on one run; by default a second run must find it too",
)
def sentinel(
    record_id: int,
    base_url: str,
    served_model: str | None,
    metrics_url: str | None,
    api_key: str | None,
    json_path: Path | None,
    request_timeout_s: float | None,
    rebaseline: bool,
    baseline_runs: int | None,
    no_confirm: bool,
) -> None:
    """Re-run record N's plan (same lengths, seeds, concurrency, needle, task) against the
    server at --base-url, compare with record N within its noise bands, and store the run
    as a pending record with the verdict.

    \b
    Exit status:
      0  no_regression or improved (or --rebaseline: the run was stored)
      1  regressed, on this run and on a second one that confirmed it
      2  usage error (no such record, a plan that cannot run)
      3  nothing answered at --base-url: nothing measured, written or stored
      4  measured, but the record was refused
    """
    from app.db import session_scope
    from app.errors import NotFound, ServebookError
    from app.jobs.versioned import run_and_read_version
    from app.sentinel.compare import confirmed
    from app.sentinel.model_name import served_model_name
    from app.sentinel.plan import NoPlan, sentinel_plan
    from app.sentinel.points import raw_points
    from app.sentinel.run import (
        SentinelOutcome,
        judge,
        load_baseline,
        sentinel_json,
        store_sentinel,
    )
    from app.sentinel.spread import RUNS_KEPT, kept_run

    if baseline_runs is not None and not rebaseline:
        raise click.UsageError(
            "--baseline-runs sets how a new baseline is measured: give --rebaseline"
        )
    settings = get_settings()
    try:
        with session_scope(settings) as session:
            baseline = load_baseline(session, record_id)
    except NotFound as error:
        raise click.BadParameter(error.message, param_hint="--record") from error
    except NoPlan as error:
        raise click.BadParameter(str(error), param_hint="--record") from error
    hosts = settings.bench_allowed_hosts
    try:
        model = (
            served_model
            or baseline.plan.get("model")
            or served_model_name(base_url, hosts, api_key)
        )
        plan = sentinel_plan(
            baseline,
            base_url=base_url,
            model=model,
            api_key=api_key,
            allowed_hosts=hosts,
            metrics_url=metrics_url,
            request_timeout_s=request_timeout_s,
        )
        kept: list[list[dict[str, Any]]] = []
        for _ in range((baseline_runs or BASELINE_RUNS) - 1 if rebaseline else 0):
            kept.append(kept_run(raw_points(judge(baseline, run_and_read_version(plan)).raw)))
        result = run_and_read_version(plan)
        outcome = judge(baseline, result)
        if outcome.report.verdict == "regressed" and not (no_confirm or rebaseline):
            # One run's outlier is not a regression: a second run must find it too.
            first = outcome.report
            result = run_and_read_version(plan)
            outcome = judge(baseline, result)
            outcome = SentinelOutcome(outcome.raw, confirmed(first, outcome.report))
    except HostNotAllowedError as error:
        raise click.UsageError(str(error)) from error
    except TargetUnreachable as error:
        raise Unreachable(f"{error} (nothing was measured or stored)") from error
    except ValueError as error:
        raise click.UsageError(f"record {record_id}'s plan cannot run: {error}") from error
    console = Console()
    report = outcome.report
    runs = " (confirmed on a second run)" if report.runs == 2 else ""
    if report.runs == 2 and report.verdict != "regressed":
        runs = " (a second run did not find the first run's regression)"
    console.print(f"sentinel against record {record_id}: {report.summary}{runs}", markup=False)
    for change in report.changes:
        console.print("  " + change_line(change), markup=False, highlight=False)
    for said in report.not_judged:
        console.print(f"  not judged: {said}", markup=False, highlight=False)
    if not rebaseline and report.baseline_runs == 1:
        console.print(
            f"  the baseline is one run: its bands hold that run's repeats, not how far a "
            f"fresh run moves against the same server (--rebaseline measures {BASELINE_RUNS})",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    try:
        with session_scope(settings) as session:
            extra = {RUNS_KEPT: kept} if kept else None
            stored = store_sentinel(
                session, outcome, result, submitted_by="local", extra_detail=extra
            )
    except ServebookError as error:
        raise NotStored(f"record refused: {error.message}") from error
    console.print(f"stored as pending record #{stored}")
    if rebaseline:
        console.print(
            f"record #{stored} is the baseline from now on, its bands holding {len(kept) + 1} runs "
            f"against this server: pass --record {stored}",
            soft_wrap=True,
        )
        return
    if json_path:
        json_path.write_text(sentinel_json(result, outcome, stored))
        console.print(f"result written to {json_path}")
    if outcome.report.verdict == "regressed":
        click.get_current_context().exit(EXIT_REGRESSED)
