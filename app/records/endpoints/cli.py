"""Console commands for records and access tokens: `servebook import`, `servebook token`."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import click

from app.config import get_settings
from app.records.importers import FORMATS
from app.records.importers.result_file import AlreadyImported, import_record
from app.records.schemas import OUTCOMES
from app.records.storage.service import IdempotencyConflict
from app.records.storage.validation import RecordInvalid
from app.security import ROLES, create_token

# The flag (or argument) of `servebook import` that gives each field an error can name.
FLAGS = {
    "model": "--model",
    "hardware": "--hardware",
    "artifact": "--artifact",
    "runtime": "--runtime",
    "runtime_version": "--runtime-version",
    "profile": "--profile",
    "gpu_count": "--gpu-count",
    "outcome": "--outcome",
    "command": "--command",
    "notes": "--notes",
    "file": "FILE",
    "idempotency_key": "--idempotency-key",
}


def flag_of(field: str) -> str:
    """An error's field as the command line names it; the file's own points are FILE's."""
    if field.startswith(("measurements", "environment")):
        return f"FILE ({field})"
    return FLAGS.get(field, field)


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--model", required=True, help="Model slug.")
@click.option("--hardware", required=True, help="Hardware slug.")
@click.option("--artifact", required=True, help="Model file (artifact) slug.")
@click.option("--runtime", required=True, help="Runtime slug.")
@click.option(
    "--runtime-version",
    default=None,
    help="Required unless the file states it (llama-bench's build, vLLM's vllm_version).",
)
@click.option("--profile", default=None, help="Profile slug.")
@click.option("--gpu-count", type=click.IntRange(min=1), default=None)
@click.option("--outcome", type=click.Choice(OUTCOMES), default="ok", show_default=True)
@click.option("--command", "command_line", default="", help="The server command as run.")
@click.option("--notes", default="")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default=None,
    help="Default: detected from the file.",
)
@click.option("--submitted-by", default="local", show_default=True)
def import_command(
    file: Path,
    model: str,
    hardware: str,
    artifact: str,
    runtime: str,
    runtime_version: str | None,
    profile: str | None,
    gpu_count: int | None,
    outcome: str,
    command_line: str,
    notes: str,
    fmt: str | None,
    submitted_by: str,
) -> None:
    """Import a vLLM, GuideLLM or llama-bench result FILE as a pending record."""
    from app.db import session_scope

    settings = get_settings()
    if file.stat().st_size > settings.max_upload_bytes:
        raise click.ClickException(
            f"{file} is larger than the {settings.max_upload_bytes:,}-byte "
            "limit (SERVEBOOK_MAX_UPLOAD_BYTES)."
        )
    meta = {
        "model": model,
        "hardware": hardware,
        "artifact": artifact,
        "runtime": runtime,
        "runtime_version": runtime_version,
        "profile": profile,
        "gpu_count": gpu_count,
        "outcome": outcome,
        "command": command_line,
        "notes": notes,
    }
    meta = {key: value for key, value in meta.items() if value not in (None, "")}
    try:
        with session_scope(settings) as session:
            record = import_record(
                session,
                file.read_bytes(),
                meta,
                submitted_by=submitted_by,
                fmt=fmt,
                filename=file.name,
                source="cli",
            ).record
            summary = (
                record.id,
                record.review_state,
                len(record.measurements),
                record.provenance_detail["tool"],
                record.provenance_detail["sha256"],
                [flag["message"] for flag in record.flags],
            )
    except RecordInvalid as invalid:
        lines = [f"  {flag_of(error.field)}: {error.message}" for error in invalid.errors]
        raise click.ClickException("the record was not stored:\n" + "\n".join(lines)) from None
    except (IdempotencyConflict, AlreadyImported) as conflict:
        raise click.ClickException(conflict.message) from None
    record_id, state, points, tool, digest, flags = summary
    click.echo(
        f"record {record_id} stored ({state}): {points} measurements from {tool}, sha256 {digest}"
    )
    for message in flags:
        click.echo(f"  flagged: {message}")


@click.group("token")
def token() -> None:
    """Access tokens for serving beyond loopback."""


def duration(_ctx: click.Context, _param: click.Parameter, value: str | None) -> object:
    """`90d`, `12h`, `30m` or `3600s` as a timedelta; None when not given."""
    if value is None:
        return None
    units = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
    number, unit = value[:-1], value[-1:].lower()
    if unit not in units or not number.isdigit() or int(number) < 1:
        raise click.BadParameter("give a whole number of d, h, m or s, e.g. 90d or 12h")
    try:
        return timedelta(**{units[unit]: int(number)})
    except OverflowError as error:
        raise click.BadParameter("that is too long; give at most 999999999d") from error


@token.command("create")
@click.option("--role", type=click.Choice(ROLES), required=True)
@click.option("--name", required=True, help="Who holds it, e.g. a person or a CI job.")
@click.option(
    "--expires-in", callback=duration, default=None, help="e.g. 90d or 12h; default: never."
)
def token_create(role: str, name: str, expires_in: timedelta | None) -> None:
    """Create a token and print it once; only its sha256 is stored."""
    from app.db import session_scope

    try:
        with session_scope(get_settings()) as session:
            secret = create_token(session, name, role, expires_in)  # type: ignore[arg-type]
    except ValueError as error:
        raise click.ClickException(str(error)) from error
    click.echo(f"{role} token for {name} (shown only now, store it safely):", err=True)
    click.echo(secret)


@token.command("register")
@click.option("--role", type=click.Choice(ROLES), required=True)
@click.option("--name", required=True, help="Who holds it, e.g. a person or a CI job.")
@click.option(
    "--from-env",
    "variable",
    required=True,
    help="The environment variable holding the token (never on the command line, where "
    "other users of the machine could read it).",
)
def token_register(role: str, name: str, variable: str) -> None:
    """Store a token made elsewhere (sb_ and 32+ characters); already stored, nothing changes."""
    import os

    from app.db import session_scope
    from app.security.tokens import register_token

    secret = os.environ.get(variable, "")
    if not secret:
        raise click.ClickException(f"{variable} is not set")
    try:
        with session_scope(get_settings()) as session:
            added = register_token(session, name, role, secret)  # type: ignore[arg-type]
    except ValueError as error:
        raise click.ClickException(f"{variable}: {error}") from error
    click.echo(f"{role} token for {name} " + ("registered" if added else "already registered"))


@token.command("list")
def token_list() -> None:
    """Every token: id, name, role, state, when it expires and when it was last used."""
    from app.db import session_scope, utcnow
    from app.security.tokens import TokenRepository

    with session_scope(get_settings()) as session:
        tokens = TokenRepository(session).all()
        now = utcnow()
        click.echo(f"{'id':>4}  {'name':<24} {'role':<10} {'state':<8} {'expires':<17} last used")
        for t in tokens:
            expires = t.expires_at.replace(tzinfo=UTC) if t.expires_at else None
            state = (
                "revoked" if t.revoked_at else "expired" if expires and expires <= now else "active"
            )
            click.echo(
                f"{t.id:>4}  {t.name:<24.24} {t.role:<10} {state:<8} "
                f"{moment(expires):<17} {moment(t.last_used_at)}"
            )


@token.command("revoke")
@click.argument("token_id", type=click.IntRange(min=1))
def token_revoke(token_id: int) -> None:
    """Revoke a token by its id (`servebook token list`): it fails at once, and every browser
    signed in with it is signed out."""
    from app.db import session_scope
    from app.security.tokens import TokenRepository

    with session_scope(get_settings()) as session:
        revoked = TokenRepository(session).revoke(token_id)
        if revoked is None:
            raise click.ClickException(f"no token with id {token_id}")
        name = revoked.name
    click.echo(f"revoked token {token_id} ({name})")


def moment(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "never"
