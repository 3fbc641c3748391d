"""A task as the API takes and shows it; the prompt and check shapes are the benchmark's."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.bench.task_spec import MAX_PROMPTS, TaskPrompt
from app.i18n.validation_words import refusal
from app.security.json_input import LONE_SURROGATE, not_a_bool
from app.security.json_scan import lone_surrogate_at


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
    def valid_unicode(cls, value: Any) -> Any:
        """A task file (YAML) skips the JSON parser that refuses lone surrogates."""
        where = lone_surrogate_at(value) if isinstance(value, dict) else None
        if where is not None:
            raise refusal(LONE_SURROGATE, field=where or "task")
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
