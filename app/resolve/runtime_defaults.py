"""What a runtime does with a knob its command leaves out: the sourced table
`seed_data/runtime_defaults.yaml`.

A command leaves a knob out only where the runtime's documented default equals the value
the profile relies on (or the runtime derives it by the rule the estimate follows); every
other knob is set on the command line, so "left at the runtime's default" is only ever said
where it is true, with the version and source the default was read from.
"""

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, HttpUrl, model_validator

from app.models import Hardware
from app.resolve.commands import KNOBS
from app.resources import SEED_DIR

# The knobs a command may leave out (`Argv.option`); the others it always sets, or sets
# exactly when they depart from what the runtime does anyway.
OPTIONAL_KNOBS = ("tensor_parallel", "prefill_tokens", "max_concurrency", "memory_fraction")

TABLE_PATH = SEED_DIR / "runtime_defaults.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Tier(_Strict):
    below_gb: Annotated[float, Field(gt=0)] | None = None
    value: int


class Except(_Strict):
    name_contains: str
    value: int


class DefaultRule(_Strict):
    """One of: a value; a value by each card's memory; derived by the runtime at start."""

    value: bool | int | str | None = None
    by_card_memory: tuple[Tier, ...] | None = None
    # `except` is a Python keyword: the YAML key is read into `exception`.
    exception: Except | None = Field(default=None, alias="except")
    derived: bool = False
    modelled: bool = False

    @model_validator(mode="after")
    def one_kind(self) -> "DefaultRule":
        kinds = [self.value is not None, self.by_card_memory is not None, self.derived]
        if sum(kinds) != 1:
            raise ValueError("give exactly one of value, by_card_memory or derived")
        tiers = self.by_card_memory or ()
        if tiers and (
            tiers[-1].below_gb is not None or any(t.below_gb is None for t in tiers[:-1])
        ):
            raise ValueError("every tier but the last has below_gb; the last has none")
        return self

    def on(self, hardware: Hardware) -> Any:
        """The default on this hardware's cards; None when the runtime derives it."""
        if self.derived:
            return None
        if self.by_card_memory is None:
            return self.value
        if self.exception and self.exception.name_contains.lower() in hardware.name.lower():
            return self.exception.value
        memory = hardware.memory_gb_per_gpu
        for tier in self.by_card_memory:
            if tier.below_gb is None or memory < tier.below_gb:
                return tier.value
        raise AssertionError("the last tier has no bound")


class RuntimeDefault(_Strict):
    runtime: str
    knob: Literal[KNOBS]  # a knob a profile sets (app/resolve/commands.py)
    flag: str
    default: DefaultRule
    version: str = Field(min_length=1)
    source: HttpUrl

    def holds(self, value: Any, hardware: Hardware) -> bool:
        """Whether leaving the knob out gives `value` on this hardware."""
        if self.default.derived:
            return self.default.modelled
        return self.default.on(hardware) == value


class _Table(_Strict):
    schema_version: Literal[1]
    defaults: tuple[RuntimeDefault, ...]


@lru_cache(maxsize=1)
def runtime_defaults(path: Path = TABLE_PATH) -> dict[tuple[str, str], RuntimeDefault]:
    table = _Table.model_validate(yaml.safe_load(path.read_text()))
    found: dict[tuple[str, str], RuntimeDefault] = {}
    for entry in table.defaults:
        key = (entry.runtime, entry.knob)
        if key in found:
            raise ValueError(f"{path.name}: {entry.runtime} {entry.knob} is listed twice")
        found[key] = entry
    return found


def documented_default(runtime: str, knob: str) -> RuntimeDefault | None:
    return runtime_defaults().get((runtime, knob))


def not_at_default(
    runtime: str, values: Any, hardware: Hardware, knobs: Iterable[str]
) -> frozenset[str]:
    """The knobs whose value is not what the runtime gives when they are left out: the
    command must set them. A knob the table does not list is set too."""
    must = set()
    for knob in knobs:
        entry = documented_default(runtime, knob)
        if entry is None or not entry.holds(getattr(values, knob), hardware):
            must.add(knob)
    return frozenset(must)
