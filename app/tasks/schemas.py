"""A task as the API takes and shows it; the prompt and check shapes are the benchmark's."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.bench.task_spec import MAX_PROMPTS, TaskPrompt


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
