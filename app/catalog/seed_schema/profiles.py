"""Entries of ``profiles.yaml``: serving profiles, resolved per hardware by the recipes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, StrictBool, StrictFloat, StrictInt, Tag, field_validator

from app.catalog.seed_schema.fields import ProseText, Slug, StrictModel


class SeedByGroup(StrictModel):
    """A knob that differs between local machines and servers."""

    server: StrictInt = Field(gt=0)
    local: StrictInt = Field(gt=0)


def _start_context_kind(value: Any) -> str:
    return "max" if value == "max" else "by_group"


StartContext = Annotated[
    Annotated[Literal["max"], Tag("max")] | Annotated[SeedByGroup, Tag("by_group")],
    Discriminator(_start_context_kind),
]


class SeedProfile(StrictModel):
    """A serving profile; its knobs are resolved per hardware by the recipes.

    ``start_context: max`` means "the largest context that fits".
    """

    slug: Slug
    name: ProseText
    summary: ProseText
    sort: StrictInt
    start_context: StartContext
    concurrency: SeedByGroup
    kv_cache_dtype: Literal["auto", "fp8"]
    prefill_tokens: SeedByGroup
    memory_fraction: StrictFloat
    speculative_decoding: StrictBool
    cuda_graphs: StrictBool
    stop_conditions: list[ProseText] = Field(min_length=1)
    measurement_order: list[ProseText] = Field(min_length=1)

    @field_validator("memory_fraction")
    @classmethod
    def _fraction(cls, value: float) -> float:
        if not 0 < value <= 0.90:
            raise ValueError(
                f"must be in (0, 0.90] (keep memory limits below the maximum), got {value:g}"
            )
        return value
