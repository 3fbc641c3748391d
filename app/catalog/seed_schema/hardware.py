"""Entries of ``hardware.yaml``: one device times a count, with the link between the cards."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool, StrictInt, model_validator

from app.catalog.seed_schema.fields import (
    NO_PROSE,
    Platform,
    Prose,
    SFloat,
    Slug,
    StrictModel,
    Text,
    Url,
    check_range,
    field_error,
)

Interconnect = Literal["none", "nvlink", "nvswitch", "pcie", "xgmi"]

VENDOR_PLATFORMS: dict[str, frozenset[str]] = {
    "apple": frozenset({"metal"}),
    "nvidia": frozenset({"cuda"}),
    "amd": frozenset({"rocm", "vulkan"}),
}


class SeedHardware(StrictModel):
    """A hardware configuration: one device times a count, with the link between the cards.

    Figures are per GPU except ``usable_memory_gb``, which is the total over all GPUs.
    """

    slug: Slug
    name: Text
    group: Literal["local", "server"]
    vendor: Literal["apple", "nvidia", "amd"]
    platform: Platform
    unified_memory: StrictBool
    device: Text
    gpu_count: StrictInt = Field(ge=1)
    memory_gb_per_gpu: SFloat
    usable_memory_gb: SFloat
    bandwidth_gb_s_per_gpu: SFloat | None = None
    bf16_tflops_per_gpu: SFloat | None = None
    interconnect: Interconnect
    source_row: StrictBool = False
    sort: StrictInt
    sources: list[Url] = Field(min_length=1)
    notes: Prose = NO_PROSE

    @model_validator(mode="after")
    def _check(self) -> SeedHardware:
        self._check_memory()
        if self.platform not in VENDOR_PLATFORMS[self.vendor]:
            raise field_error("platform", f"{self.platform!r} is not a {self.vendor} platform")
        self._check_topology()
        return self

    def _check_memory(self) -> None:
        for name in (
            "memory_gb_per_gpu",
            "usable_memory_gb",
            "bandwidth_gb_s_per_gpu",
            "bf16_tflops_per_gpu",
        ):
            check_range(getattr(self, name), name, low=0)
        total = self.gpu_count * self.memory_gb_per_gpu.value
        if self.usable_memory_gb.value > total:
            raise field_error(
                "usable_memory_gb",
                f"{self.usable_memory_gb.value:g} exceeds "
                f"gpu_count x memory_gb_per_gpu = {total:g}",
            )

    def _check_topology(self) -> None:
        if self.unified_memory and self.gpu_count != 1:
            raise field_error("gpu_count", "a unified-memory machine has one GPU")
        if self.gpu_count == 1 and self.interconnect != "none":
            raise field_error("interconnect", "a single GPU has no interconnect (use none)")
        if self.gpu_count > 1 and self.interconnect == "none":
            raise field_error(
                "interconnect", "several GPUs need an interconnect (nvlink, nvswitch, xgmi or pcie)"
            )
