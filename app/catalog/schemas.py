"""Inputs and JSON shapes of the catalog: the model list and the fit table's filters."""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.estimate import Verdict


class FitFilters(BaseModel):
    """Filters of the fit table; kept in the URL so a filtered table can be shared."""

    model_config = ConfigDict(extra="ignore")

    # A form's "any" choice sends the field blank: documented, and read as no filter.
    platform: str | None = Field(default=None, max_length=20)
    min_memory: Annotated[float, Field(ge=0, le=100_000)] | Literal[""] | None = None
    verdict: Verdict | Literal[""] | None = None
    # "For N users at X tok/s each": every row says whether it carries that load, and if
    # not, why and how many replicas would (both are needed; the rows are all kept).
    users: int | None = Field(default=None, ge=1, le=1_000_000)
    min_decode_tokens_per_s: float | None = Field(default=None, gt=0, le=100_000)
    page: int = Field(default=1, ge=1, le=100_000)

    @field_validator("*", mode="before")
    @classmethod
    def blank_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @property
    def load(self) -> tuple[int, float] | None:
        """The load the rows are weighed for, when both its figures are given."""
        if self.users is None or self.min_decode_tokens_per_s is None:
            return None
        return self.users, self.min_decode_tokens_per_s

    def query(self) -> dict[str, str]:
        values = self.model_dump(mode="json", exclude={"page"} if self.page == 1 else set())
        return {k: str(v) for k, v in values.items() if v is not None}


class ModelOut(BaseModel):
    slug: str
    name: str
    hf_repo: str
    publisher: str
    family: str
    is_moe: bool
    params_total_b: float
    params_active_b: float
    native_context: int
    attention: str
    url: str
    fit_url: str
