"""A task as the API takes and shows it; the prompt and check shapes are the benchmark's."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.bench.quality.task_spec import MAX_PROMPTS, TaskPrompt
from app.i18n.validation_words import refused
from app.security.json_input import hostile_value_at, not_a_bool


class TaskIn(BaseModel):
    """A new task. Without ``version``, the next one for the name (or the latest, unchanged,
    when its prompts are the same)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=120, pattern=r"^[A-Za-z0-9_.\-]+$")
    version: int | None = Field(default=None, ge=1, le=1_000_000)
    description: str = Field(default="", max_length=4000)
    source: str = Field(
        default="", max_length=2000, description="where the prompts and answers come from"
    )
    max_tokens: int | None = Field(default=None, ge=1, le=32_768)
    prompts: list[TaskPrompt] = Field(min_length=1, max_length=MAX_PROMPTS)

    # JSON `true` is not the count 1 (it was stored as 1).
    _whole_numbers = field_validator("version", "max_tokens", mode="before")(not_a_bool)

    @model_validator(mode="before")
    @classmethod
    def valid_input(cls, value: Any) -> Any:
        """The input gate every entry shares (app.security.json_input.hostile_value_at):
        the form, importers and Python callers skip the JSON parser's checks at the edge.
        The error names the field through its `field` param."""
        said = hostile_value_at(value, "") if isinstance(value, dict) else None
        if said is not None:
            raise refused(said)
        return value


class TaskSummary(BaseModel):
    id: int
    name: str
    version: int
    description: str
    prompt_count: int
    checks: list[str] = Field(description="the kinds of check its prompts use")
    url: str


class TaskOut(BaseModel):
    id: int
    name: str
    version: int
    description: str
    source: str
    max_tokens: int | None = None
    prompts: list[TaskPrompt]
    created_by: str
    created_at: datetime
    url: str
