"""The probe's points as a worker sends them back, as a schema: what `ProbeResult.from_json`
accepts, stated, so that a body valid by the API's schema is one the server can fit."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

# The same bounds `ProbeResult.from_json` holds every point to.
MAX_POINT_S = 3600  # a step or a first token that takes an hour is no measurement
MAX_COUNT = 10**8  # requests in a batch, tokens in a prompt or in the KV cache
MAX_SPREAD = 10**6
MAX_TEXT = 200

Count = Annotated[int, Field(gt=0, lt=MAX_COUNT)]
Depth = Annotated[int, Field(ge=0, lt=MAX_COUNT)]
PointSeconds = Annotated[float, Field(gt=0, lt=MAX_POINT_S, allow_inf_nan=False)]
Spread = Annotated[float, Field(ge=1, lt=MAX_SPREAD, allow_inf_nan=False)]
# [batch, depth, step_s, spread]; older probes send no spread (read as 1).
DecodePointIn = tuple[Count, Depth, PointSeconds, Spread] | tuple[Count, Depth, PointSeconds]
PrefillPointIn = tuple[Count, PointSeconds]  # [prompt tokens, first-token seconds]


class ProbePointsIn(BaseModel):
    """A probe's points and what the server said of itself (`ProbeResult.to_json`)."""

    model_config = ConfigDict(extra="forbid")
    served_model: str = Field(max_length=MAX_TEXT)
    owned_by: str | None = Field(default=None, max_length=MAX_TEXT)
    runtime_version: str | None = Field(default=None, max_length=MAX_TEXT)
    context: int | None = Field(default=None, gt=0, lt=MAX_COUNT)
    decode: list[DecodePointIn] = Field(description="a decode step's median time per point")
    prefill: list[PrefillPointIn] = Field(description="a prompt's median first-token time")
    requests: int = Field(default=0, ge=0, lt=MAX_COUNT)
    failed: int = Field(default=0, ge=0, lt=MAX_COUNT)
    seconds: float = Field(default=0.0, ge=0, lt=10**6, allow_inf_nan=False)
