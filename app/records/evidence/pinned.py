"""What a verified command says it was verified with: the runtime build the server itself
reported (else the one declared), the image or wheel, the model revision, and what the
record does not cover. One place, so the profile page and the record page say the same."""

from dataclasses import dataclass, field
from typing import Any

from app.models import Record
from app.records.storage.runtime_names import REPORTING_RUNTIME_NAMES

DIGEST_SHOWN = 12  # hex digits of an image digest shown; the full one is in the title


@dataclass(frozen=True)
class Pins:
    runtime: str  # e.g. "vLLM 0.24.0"
    reported: bool  # True when the server itself said so
    image: str | None = None
    image_full: str | None = None
    wheel: str | None = None
    model_revision: str | None = None
    driver: str | None = None
    cuda: str | None = None
    rocm: str | None = None
    out_of_scope: list[str] = field(default_factory=list)


def short_digest(digest: str) -> str:
    algorithm, _, value = digest.partition(":")
    if not value:
        return digest[:DIGEST_SHOWN] + ("…" if len(digest) > DIGEST_SHOWN else "")
    shown = value[:DIGEST_SHOWN] + ("…" if len(value) > DIGEST_SHOWN else "")
    return f"{algorithm}:{shown}"


def pins_of(record: Record) -> Pins:
    pinned: dict[str, Any] = record.pinned or {}
    reported = pinned.get("server_reported")
    if isinstance(reported, dict) and reported.get("version"):
        slug = reported.get("runtime")
        name = (
            record.runtime.name
            if slug == record.runtime.slug
            else REPORTING_RUNTIME_NAMES.get(str(slug), str(slug))
        )
        runtime, said_by_server = f"{name} {reported['version']}", True
    else:
        runtime, said_by_server = f"{record.runtime.name} {record.runtime_version}", False
    image = pinned.get("image_digest")
    return Pins(
        runtime=runtime,
        reported=said_by_server,
        image=short_digest(image) if image else None,
        image_full=image,
        wheel=pinned.get("wheel_version"),
        model_revision=pinned.get("model_revision"),
        driver=pinned.get("driver"),
        cuda=pinned.get("cuda"),
        rocm=pinned.get("rocm"),
        out_of_scope=list(pinned.get("out_of_scope") or []),
    )
