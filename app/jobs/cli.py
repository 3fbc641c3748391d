"""`servebook bench`: run a benchmark now, in this terminal (`servebook worker` runs queued
jobs: app/worker_cli.py)."""

from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from app.bench.plan import MAX_LEVEL_SECONDS, BenchPlan
from app.bench.procedure import TargetUnreachable, run_benchmark_sync
from app.bench.quality.task_spec import TaskFileError, TaskSpec
from app.bench.result import BenchResult
from app.bench.transport.hosts import HostNotAllowedError
from app.config import get_settings
from app.jobs.result_tables import summary
from app.jobs.to_record import kept_plan, record_from_result
from app.jobs.versioned import with_server_version
from app.jobs.worker import API_KEY_ENV
from app.records.storage.validation import schema_errors
from app.tasks.files import read_task_file

# Exit codes of `servebook bench`, for scripts; 2 is click's own code for a usage error.
EXIT_OUTCOME_NOT_OK = 1  # measured, but the outcome is not ok (click errors exit 1 too)
EXIT_UNREACHABLE = 3  # nothing answered: nothing measured, nothing written or stored


class Unreachable(click.ClickException):
    exit_code = EXIT_UNREACHABLE


def int_list(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        return [int(part) for part in value.replace(" ", "").split(",") if part]
    except ValueError as error:
        raise click.BadParameter("give comma-separated whole numbers, e.g. 1024,4096") from error


@click.command()
@click.option("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
@click.option("--model", "served_model", required=True, help="model name the server serves")
@click.option(
    "--lengths",
    callback=int_list,
    default=None,
    help="default: 1024,4096 and, when the context allows, a length past 16K for the needle",
)
@click.option("--concurrency", callback=int_list, default="1,2,4,8", show_default=True)
@click.option(
    "--repeat",
    default=3,
    show_default=True,
    type=click.IntRange(1, 50),
    help="requests per length, and per stream at each concurrency level (at least 8 there "
    "unless --requests-per-stream says otherwise)",
)
@click.option(
    "--requests-per-stream",
    type=click.IntRange(1, 200),
    default=None,
    help="requests each stream sends at each concurrency level; default --repeat, at least 8",
)
@click.option(
    "--level-seconds",
    type=click.FloatRange(1, MAX_LEVEL_SECONDS),
    default=None,
    help="run each concurrency level this long instead of a number of requests",
)
@click.option("--max-tokens", default=128, show_default=True, type=click.IntRange(1, 8192))
@click.option("--needle/--no-needle", default=None, help="default: only above 16K")
@click.option(
    "--context-length",
    type=click.IntRange(1),
    default=None,
    help="the configuration's context, tokens; default: what the server reports",
)
@click.option(
    "--needle-grid/--no-needle-grid",
    default=None,
    help="the needle at 5 depths of 4096, 8192 ... up to --context-length: the safe context "
    "ceiling. Given alone it runs only the quality checks; default: part of the default run "
    "when the context is known and past 16K",
)
@click.option(
    "--grid-threshold",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.95,
    show_default=True,
    help="a length is safe when the needle is found this often at every depth",
)
@click.option("--tool-calls", is_flag=True, help="check OpenAI tool calls, short and long context")
@click.option("--task", "task_id", type=click.IntRange(1), default=None, help="a stored task's id")
@click.option(
    "--task-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='a task: .jsonl, one {"prompt": ..., "check": {...}} a line, or .yaml',
)
@click.option(
    "--task-min-pass-rate",
    type=click.FloatRange(0, 1),
    default=None,
    help="below this the outcome is wrong_answer",
)
@click.option("--ttft-limit-ms", type=float, default=None, help="stop the ramp above this p90")
@click.option("--metrics-url", default=None, help="Prometheus /metrics of the server")
@click.option("--timeout", "request_timeout_s", default=600.0, show_default=True)
@click.option("--connect-timeout", "connect_timeout_s", default=10.0, show_default=True)
@click.option("--api-key", envvar=API_KEY_ENV, default=None, help=f"or ${API_KEY_ENV}")
@click.option("--json", "json_path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--record", is_flag=True, help="store the result as a pending record")
@click.option("--catalog-model", default=None, help="catalog model slug (with --record)")
@click.option("--artifact", default=None)
@click.option("--runtime", default=None)
@click.option("--runtime-version", default=None)
@click.option("--hardware", default=None)
@click.option("--profile", default=None)
@click.option("--command-line", "command", default="", help="the server's launch command")
@click.option("--image-digest", default=None, help="with --record: the container image digest")
@click.option("--wheel-version", default=None, help="with --record: e.g. vllm==0.12.0")
@click.option("--model-revision", default=None, help="with --record: the model repo's commit")
@click.option("--driver", default=None, help="with --record: GPU driver version")
@click.option("--cuda", default=None, help="with --record: CUDA version")
@click.option("--rocm", default=None, help="with --record: ROCm version")
@click.option("--out-of-scope", multiple=True, help="with --record: what the record does not cover")
def bench(served_model: str, json_path: Path | None, record: bool, **options: object) -> None:
    """Measure an OpenAI-compatible server: smoke, warm-up, lengths, ramp, needle, task.

    \b
    Exit status:
      0  the server was measured and the outcome is ok
      1  the outcome is not ok (load_failure, long_context_failure, wrong_answer,
         inconclusive: most answers arrived in bursts, so decode was not measurable);
         the result is still printed, written by --json and stored by --record.
         Other errors (a host not allowed, a record refused) also exit 1
      2  usage error
      3  could not connect to the target: nothing measured, written or stored
    """
    target_keys = (
        "catalog_model",
        "artifact",
        "runtime",
        "runtime_version",
        "hardware",
        "profile",
        "command",
    )
    target = {key: options.pop(key) for key in target_keys}
    pins = {key: options.pop(key) for key in PIN_KEYS}
    target["pinned"] = {key: list(v) if isinstance(v, tuple) else v for key, v in pins.items() if v}
    if record:
        missing = [k for k in target_keys[:5] if not target[k]]
        if missing:
            raise click.UsageError(
                "--record needs " + ", ".join(f"--{m.replace('_', '-')}" for m in missing)
            )
    plan = build_plan(served_model, options)
    result = with_server_version(run_with_progress(plan))
    console = Console()
    for table in summary(result):
        console.print(table)
    # Error texts may hold brackets that rich would read as markup; one line for grep.
    console.print(outcome_line(result), markup=False, highlight=False, soft_wrap=True)
    if json_path:
        json_path.write_text(result.model_dump_json(indent=2))
        console.print(f"result written to {json_path}")
    if record:
        store_record(console, result, target)
    if result.outcome != "ok":
        click.get_current_context().exit(EXIT_OUTCOME_NOT_OK)


def outcome_line(result: BenchResult) -> str:
    if result.outcome == "ok":
        return "outcome: ok"
    return f"outcome: {result.outcome}: {result.outcome_error or 'no error text'}"


DEFAULT_LENGTHS = [1024, 4096]
# What a record may declare about exactly what ran (the server's own version is read).
PIN_KEYS = (
    "image_digest",
    "wheel_version",
    "model_revision",
    "driver",
    "cuda",
    "rocm",
    "out_of_scope",
)


def build_plan(served_model: str, options: dict) -> BenchPlan:
    needle = options.pop("needle")
    lengths = options["lengths"]
    grid = options["needle_grid"]
    if grid is True and options["context_length"] is None:
        raise click.UsageError("--needle-grid needs --context-length: the grid runs up to it")
    values = {
        "base_url": options["base_url"],
        "model": served_model,
        "lengths": lengths or DEFAULT_LENGTHS,
        # Asked-for lengths are kept as given; the default adds one for the needle.
        "add_long_length": lengths is None,
        "context_length": options["context_length"],
        "needle_grid": ("auto" if lengths is None else False) if grid is None else grid,
        "grid_threshold": options["grid_threshold"],
        "tool_calls": options["tool_calls"],
        # The grid asked for alone is a quality run; with --lengths the speed runs too.
        "measure_speed": not (grid is True and lengths is None),
        "task": load_task(options["task_id"], options["task_file"]),
        "task_min_pass_rate": options["task_min_pass_rate"],
        "concurrency_levels": options["concurrency"],
        "repeat": options["repeat"],
        "requests_per_stream": options["requests_per_stream"],
        "level_seconds": options["level_seconds"],
        "max_tokens": options["max_tokens"],
        "needle": "auto" if needle is None else needle,
        "ttft_limit_ms": options["ttft_limit_ms"],
        "metrics_url": options["metrics_url"],
        "request_timeout_s": options["request_timeout_s"],
        "connect_timeout_s": options["connect_timeout_s"],
        "api_key": options["api_key"],
        "allowed_hosts": get_settings().bench_allowed_hosts,
    }
    try:
        return BenchPlan.model_validate(values)
    except ValidationError as error:
        raise click.UsageError(plan_refusal(error, values)) from error
    except ValueError as error:
        raise click.UsageError(str(error)) from error


# The plan's fields whose flag is not the field's name written with dashes.
PLAN_FLAGS = {
    "concurrency_levels": "--concurrency",
    "model": "--model",
    "request_timeout_s": "--timeout",
    "connect_timeout_s": "--connect-timeout",
    "task": "--task",
}


def plan_flag(field: str) -> str:
    name = field.split(".")[0]
    return PLAN_FLAGS.get(name, "--" + name.replace("_", "-"))


def plan_refusal(error: ValidationError, values: dict[str, Any]) -> str:
    """Each refused value by its flag, the value given and the bound it broke, in words:
    never the validation library's own report."""
    lines = []
    for problem in schema_errors(error):
        field = problem.field
        flag = plan_flag(field) if field != "record" else "the options"
        given = given_value(values, field)
        shown = f" {given}" if given is not None else ""
        lines.append(f"{flag}{shown}: {problem.text()}")
    return "\n".join(lines)


def given_value(values: dict[str, Any], field: str) -> Any:
    """The value at a dotted path of the plan's input (an index into a list), if any."""
    value: Any = values
    for part in field.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value if isinstance(value, int | float | str) and not isinstance(value, bool) else None


def load_task(task_id: int | None, task_file: Path | None) -> TaskSpec | None:
    """The task to run: a stored one by id, or one read from a YAML or JSONL file."""
    if task_id is not None and task_file is not None:
        raise click.UsageError("give --task or --task-file, not both")
    if task_file is not None:
        try:
            data = read_task_file(task_file)
        except TaskFileError as error:
            raise click.BadParameter(str(error), param_hint="--task-file") from error
        return TaskSpec(**data.model_dump(exclude={"version"}), version=data.version or 1)
    if task_id is None:
        return None
    from app.db import session_scope
    from app.errors import NotFound
    from app.tasks.service import get_task, task_spec

    try:
        with session_scope(get_settings()) as session:
            return task_spec(get_task(session, task_id))
    except NotFound as error:
        raise click.BadParameter(error.message, param_hint="--task") from error


def run_with_progress(plan: BenchPlan) -> BenchResult:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task("starting", total=None)

        def report(step: str, done: int, total: int) -> None:
            progress.update(task, description=step, completed=done, total=total)

        try:
            return run_benchmark_sync(plan, on_progress=report)
        except HostNotAllowedError as error:
            raise click.ClickException(str(error)) from error
        except TargetUnreachable as error:
            raise Unreachable(f"{error} (nothing was measured or stored)") from error


def store_record(console: Console, result: BenchResult, target: dict) -> None:
    from app.db import session_scope
    from app.errors import ServebookError
    from app.records.storage.service import submit_record

    raw = record_from_result(result, {**target, "model": target["catalog_model"]})
    try:
        with session_scope(get_settings()) as session:
            submission = submit_record(
                session,
                raw,
                provenance="bench",
                submitted_by="local",
                provenance_detail={"tool": "servebook bench", "plan": kept_plan(result)},
            )
            record_id = submission.record.id
    except ServebookError as error:
        raise click.ClickException(f"record refused: {error.message}") from error
    console.print(f"stored as pending record #{record_id}")
