"""Entries of ``runtimes.yaml``: where a runtime runs, what it loads, how it budgets memory."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr, model_validator

from app.catalog.seed_schema.fields import (
    NO_PROSE,
    Format,
    Platform,
    Prose,
    Slug,
    StrictModel,
    Text,
    Url,
    Version,
    field_error,
)


class SeedBudget(StrictModel):
    """How a runtime decides how much memory it takes.

    * ``vllm_fraction``: the runtime takes ``fraction`` of each GPU's memory.
    * ``sglang_static``: the runtime computes its static fraction from its own reserve.
    * ``fixed_margin``: the runtime leaves ``margin_gb`` per GPU free.
    """

    kind: Literal["vllm_fraction", "sglang_static", "fixed_margin"]
    fraction: StrictFloat | None = None
    margin_gb: StrictFloat | None = None

    @model_validator(mode="after")
    def _check(self) -> SeedBudget:
        self._check_fraction()
        self._check_margin()
        return self

    def _check_fraction(self) -> None:
        if self.kind == "vllm_fraction":
            if self.fraction is None:
                raise field_error("fraction", "required for kind vllm_fraction")
            if not 0 < self.fraction <= 1:
                raise field_error("fraction", f"must be in (0, 1], got {self.fraction:g}")
        elif self.fraction is not None:
            raise field_error("fraction", f"only for kind vllm_fraction, not {self.kind}")

    def _check_margin(self) -> None:
        if self.kind == "fixed_margin":
            if self.margin_gb is None:
                raise field_error("margin_gb", "required for kind fixed_margin")
            if self.margin_gb < 0:
                raise field_error("margin_gb", f"must be >= 0, got {self.margin_gb:g}")
        elif self.margin_gb is not None:
            raise field_error("margin_gb", f"only for kind fixed_margin, not {self.kind}")


class FormatCell(StrictModel):
    """One cell of the runtime x format matrix, as the runtime's own documentation says it.

    * ``routed``: the runtime loads the format and the catalog builds routes for it.
    * ``loads``: the runtime can load it, but the catalog does not route it (experimental
      or slower support; ``note`` says why).
    * ``convert``: only after a conversion or import step (``note`` names it).
    * ``no``: the runtime cannot load it.
    """

    status: Literal["routed", "loads", "convert", "no"]
    source: Url
    note: StrictStr = ""


ALL_FORMATS: tuple[str, ...] = Format.__args__  # type: ignore[attr-defined]


class SeedRuntime(StrictModel):
    """A serving runtime: where it runs, what it loads, how it spreads and budgets memory."""

    slug: Slug
    name: Text
    platforms: list[Platform] = Field(min_length=1)
    formats: list[Format] = Field(min_length=1)
    # Every format's cell, with its source; `formats` is exactly the routed ones.
    format_support: dict[Format, FormatCell]
    tensor_parallel: StrictBool
    split: Literal["tensor", "layer", "none"]
    budget: SeedBudget
    kv_dtypes: list[Text] = Field(min_length=1)
    caps_sliding_window: StrictBool
    cuda_graphs: StrictBool
    default_prefill_tokens: StrictInt = Field(gt=0)
    priority: StrictInt
    homepage: Url
    min_version: Version
    sources: list[Url] = Field(min_length=1)
    notes: Prose = NO_PROSE

    @model_validator(mode="after")
    def _check(self) -> SeedRuntime:
        if self.tensor_parallel != (self.split == "tensor"):
            raise field_error("split", "split is tensor exactly when tensor_parallel is true")
        if "auto" not in self.kv_dtypes:
            raise field_error("kv_dtypes", "must include auto (the runtime's default)")
        for name in ("platforms", "formats", "kv_dtypes"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise field_error(name, "lists a value twice")
        if self.cuda_graphs and not {"cuda", "rocm"} & set(self.platforms):
            raise field_error("cuda_graphs", "CUDA graphs need a cuda or rocm platform")
        self._check_format_support()
        return self

    def _check_format_support(self) -> None:
        missing = [f for f in ALL_FORMATS if f not in self.format_support]
        if missing:
            raise field_error("format_support", f"needs a cell for {', '.join(missing)}")
        routed = {f for f, cell in self.format_support.items() if cell.status == "routed"}
        if routed != set(self.formats):
            raise field_error(
                "formats",
                f"must be the formats whose cell is routed ({', '.join(sorted(routed))}), "
                f"not {', '.join(self.formats)}",
            )
