"""The records list's filters, read from the query string by the pages and the API."""

from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.records.schemas import ReviewState


class RecordFilters(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str | None = Field(default=None, max_length=100)
    hardware: str | None = Field(default=None, max_length=100)
    # A form's "any" choice sends the field blank.
    state: ReviewState | Literal[""] | None = Field(default=None, description="blank: any")

    @field_validator("*", mode="before")
    @classmethod
    def blank_is_none(cls, value: Any) -> Any:
        return None if value == "" else value


FiltersDep = Annotated[RecordFilters, Query()]
