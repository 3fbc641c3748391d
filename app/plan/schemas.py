"""`POST /api/plan`'s request: a model as for `/api/estimate`, a load, the hardware to
weigh and the price of a GPU-hour. Strict: any other field is refused by name."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.asking.request import RUNS_RELATION, GpuByName, HardwareIn, ModelIn
from app.catalog.openapi import catalog_field
from app.estimate.speed.load import DEFAULT_OUTPUT_TOKENS, DEFAULT_PROMPT_TOKENS
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.i18n.validation_words import refusal

MAX_USERS = 1_000_000
# A load that names no request lengths is of the stated default request, as every estimate
# is (`app.estimate.speed.load.RequestShape.filled`): the plan states it in its answer
# (`request_shape`), never the server's largest context.

PRICE_NOT_POSITIVE = register(
    "plan.price_not_positive",
    _l("a price per GPU-hour must be greater than 0, not %(price)s"),
)
PRICE_FOR_NOT_POSITIVE = register(
    "plan.price_for_not_positive",
    _l("the price per GPU-hour for %(hardware)s must be greater than 0, not %(price)s"),
)
# A price per GPU-hour past any rental's (the dearest machines rent for tens of dollars).
MAX_PRICE = 1_000_000
PRICE_TOO_HIGH = register(
    "plan.price_too_high",
    _l("a price per GPU-hour is at most %(most)s, not %(price)s"),
)
PRICE_NOT_A_NUMBER = register(
    "plan.price_not_a_number",
    _l("give a price per GPU-hour: a number, or an object of numbers keyed by hardware"),
)


def _price(value: Any, hardware: str | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise refusal(PRICE_NOT_A_NUMBER)
    if not value > 0:
        if hardware is None:
            raise refusal(PRICE_NOT_POSITIVE, price=value)
        raise refusal(PRICE_FOR_NOT_POSITIVE, hardware=hardware, price=value)
    if value > MAX_PRICE:
        raise refusal(PRICE_TOO_HIGH, most=MAX_PRICE, price=value)
    return float(value)


_PRICE = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_PRICE}
# One price for every hardware, or prices keyed by catalog hardware (the served document
# lists its slugs; a weighed card's own label is read too).
PRICE_SCHEMA = {
    "anyOf": [
        _PRICE,
        {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"type": "string", **catalog_field("hardware")},
            "additionalProperties": _PRICE,
        },
        {"type": "null"},
    ]
}


class PlanRequest(BaseModel):
    """A model and a load: `users` requests at once, each decoding at least
    `min_decode_tokens_per_s`, the first token within `max_ttft_ms` at `prompt_tokens`."""

    model_config = ConfigDict(extra="forbid")
    model: ModelIn = Field(
        description="catalog slug, or a model description (as /api/estimate)",
        json_schema_extra=catalog_field("model"),
    )
    users: int = Field(ge=1, le=MAX_USERS, description="concurrent requests to serve")
    min_decode_tokens_per_s: float = Field(
        gt=0,
        le=100_000,
        description="the least decode speed each request must see; at most the plan's "
        "`most_decode.tokens_per_s` (the same request answered with a speed it reaches; "
        "409 otherwise)",
        json_schema_extra={"x-at-most-answered": ["most_decode", "tokens_per_s"]},
    )
    max_ttft_ms: float | None = Field(
        default=None,
        gt=0,
        le=86_400_000,
        description="the first token within, milliseconds; at least the plan's "
        "`least_ttft.ms` (the same request answered without it; 409 otherwise)",
        json_schema_extra={"x-at-least-answered": ["least_ttft", "ms"]},
    )
    prompt_tokens: int = Field(
        default=DEFAULT_PROMPT_TOKENS,
        ge=1,
        le=10_000_000,
        description=f"each request's prompt; {DEFAULT_PROMPT_TOKENS:,} when not given",
    )
    output_tokens: int = Field(
        default=DEFAULT_OUTPUT_TOKENS,
        ge=1,
        le=10_000_000,
        description=f"each request's output; {DEFAULT_OUTPUT_TOKENS:,} when not given",
    )
    hardware: list[HardwareIn] | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="catalog slugs or {gpu, count}; every catalog configuration that fits "
        "when not given",
        json_schema_extra=catalog_field("hardware"),
    )
    price_per_gpu_hour: Any = Field(
        default=None,
        description="a price per GPU-hour for every hardware, or an object keyed by hardware",
        json_schema_extra=PRICE_SCHEMA,
    )
    profile: str = Field(
        default="balanced", max_length=50, json_schema_extra=catalog_field("profile", also=[])
    )
    evidence: Literal["use", "ignore"] = "use"
    runtime: str | None = Field(
        default=None,
        max_length=50,
        description="plan on this runtime only (the hardware it does not run on is not weighed; "
        "hardware listed that it does not run on is a conflict, 409); the recommended route's "
        "runtime when not given",
        json_schema_extra={**catalog_field("runtime", also=[]), "x-runs": RUNS_RELATION},
    )
    include_experimental: bool = Field(
        default=False,
        description="whether an option served through an unverified model file and runtime "
        "may be named cheapest or smallest (it is listed and marked either way)",
    )

    @field_validator("price_per_gpu_hour")
    @classmethod
    def positive_prices(cls, value: Any) -> float | dict[str, float] | None:
        if value is None:
            return None
        if isinstance(value, dict):
            if not value:
                raise refusal(PRICE_NOT_A_NUMBER)
            return {str(key): _price(price, str(key)) for key, price in value.items()}
        return _price(value)


# The hardware union names its card model by a forward reference, resolved here.
PlanRequest.model_rebuild(_types_namespace={"GpuByName": GpuByName})


Limit = Literal["memory", "decode", "ttft"]
Basis = Literal["measured", "reported", "estimated"]


class PlanBandOut(BaseModel):
    low: float
    high: float
    basis: Basis | None = None


class PlanOptionOut(BaseModel):
    """One hardware's answer (every field is in the answer; a few are named here)."""

    model_config = ConfigDict(extra="allow")
    hardware: str
    hardware_name: str
    gpus_per_replica: int
    replicas: int
    gpus: int
    profile: str
    concurrency_per_replica: int
    decode_tokens_per_s: PlanBandOut | None  # per request, at that load
    ttft_ms: PlanBandOut | None
    throughput_tokens_per_s: PlanBandOut | None  # all replicas together
    meets: bool
    experimental: bool
    limited_by: Limit | None
    one_replica_limited_by: Limit | None
    cost_per_hour: float | None
    cost_per_million_output_tokens: float | None
    command: str | None


class LeastTtftOut(BaseModel):
    ms: float
    basis: Basis | None
    hardware: str
    hardware_name: str


class MeetsRuleOut(BaseModel):
    code: str
    text: str


class MostDecodeOut(BaseModel):
    tokens_per_s: float
    basis: Basis | None
    hardware: str
    hardware_name: str


class PlanOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    meets_rule: MeetsRuleOut
    options: list[PlanOptionOut]
    cheapest: int | None  # index of the meeting option of least cost per hour
    smallest: int | None  # index of the meeting option of fewest GPUs
    least_ttft: LeastTtftOut | None = Field(
        default=None,
        description="one request's first token on the fastest hardware weighed that holds "
        "the model: the least max_ttft_ms may ask",
    )
    most_decode: MostDecodeOut | None = Field(
        default=None,
        description="one request's decode alone on the fastest hardware weighed that holds "
        "the model (the middle of its band): the most min_decode_tokens_per_s may ask",
    )
