"""A record's configuration: what it ran (the model, its file, the runtime and its version,
the hardware and its GPUs, the profile, the command, the applied values and the
environment), read from a stored record. Known-good shows it and pre-fills the record and
benchmark forms from it; the sentinel's record is about it."""

from typing import Any

import msgspec

from app.models import Record


class Configuration(msgspec.Struct, frozen=True):
    """One record's configuration, by catalog slugs."""

    model: str
    artifact: str
    runtime: str
    runtime_version: str
    hardware: str
    gpu_count: int
    profile: str | None
    command: str
    applied_values: dict[str, Any]
    environment: dict[str, Any]

    @classmethod
    def of(cls, record: Record) -> "Configuration":
        return cls(
            model=record.model.slug,
            artifact=record.artifact.slug,
            runtime=record.runtime.slug,
            runtime_version=record.runtime_version,
            hardware=record.hardware.slug,
            gpu_count=record.gpu_count,
            profile=record.profile.slug if record.profile else None,
            command=record.command,
            applied_values=record.applied_values,
            environment=record.environment,
        )

    def as_json(self) -> dict[str, Any]:
        """Field by field, in this order: a record target's shape and the JSON's."""
        return msgspec.structs.asdict(self)
