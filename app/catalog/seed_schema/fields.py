"""The building blocks of every seed entry: sourced values, constrained scalars, range checks."""

from __future__ import annotations

import re
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    StrictFloat,
    StrictInt,
    StrictStr,
    StringConstraints,
    model_validator,
)
from pydantic_core import PydanticCustomError

Basis = Literal["exact", "published", "derived", "assumed"]
"""exact: exact bytes or a definitional value; published: read in a source;
derived: arithmetic on sourced numbers; assumed: a placeholder or projection."""

Slug = Annotated[StrictStr, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]*$", max_length=100)]
Text = Annotated[StrictStr, StringConstraints(min_length=1)]
Url = Annotated[StrictStr, StringConstraints(pattern=r"^https?://\S+$")]
Version = Annotated[StrictStr, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9.+\-_]*$")]
HF_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")

Platform = Literal["cuda", "rocm", "metal", "vulkan", "cpu"]
Format = Literal["safetensors", "gguf", "mlx"]


def repo_problem(repo: str) -> str | None:
    """Why `repo` is not a Hugging Face repository name, or None when it is one."""
    return None if HF_REPO.match(repo) else f"{repo!r} is not an owner/name repository"


def field_error(field: str, message: str) -> PydanticCustomError:
    """An error that names the field it is about, for validators that see several fields."""
    return PydanticCustomError(
        "seed_field", "{field}: {message}", {"field": field, "message": message}
    )


class StrictModel(BaseModel):
    """Unknown keys are errors (they are usually typos), and loaded entries never change."""

    model_config = ConfigDict(extra="forbid", frozen=True)


T = TypeVar("T")


class Sourced(StrictModel, Generic[T]):
    """A value with its basis: ``exact``, ``published``, ``derived`` or ``assumed``.

    Accepts a plain value (basis ``published``) or a mapping
    ``{value, basis, note}`` in which ``basis`` is required.
    """

    value: T
    basis: Basis
    note: StrictStr | None = None

    @model_validator(mode="before")
    @classmethod
    def _wrap_plain_value(cls, data: Any) -> Any:
        if isinstance(data, (dict, Sourced)):
            return data
        return {"value": data, "basis": "published"}

    @property
    def estimated(self) -> bool:
        """True when the value was worked out or assumed rather than read."""
        return self.basis in ("derived", "assumed")

    def __str__(self) -> str:
        return str(self.value)


SFloat = Sourced[StrictFloat]
SInt = Sourced[StrictInt]
SStr = Sourced[StrictStr]


LANGUAGES = ("en", "ko", "ja")
"""The languages prose may be written in; English is the one every text has."""


class Prose(StrictModel):
    """Text readers see, in English and, where written, Korean and Japanese.

    Accepts a plain string (English) or a mapping ``{en: ..., ko: ..., ja: ...}`` in
    which ``en`` is required; a page in another language falls back to ``en``.
    """

    en: StrictStr
    ko: StrictStr | None = None
    ja: StrictStr | None = None

    @model_validator(mode="before")
    @classmethod
    def _wrap_plain_text(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data if isinstance(data, Prose) else {"en": data}
        unknown = [str(key) for key in data if key not in LANGUAGES]
        if unknown:
            raise field_error(
                unknown[0], f"unknown language {unknown[0]!r} (give {', '.join(LANGUAGES)})"
            )
        if "en" not in data:
            raise field_error(
                "en",
                "a text in several languages needs its English (en), "
                "which readers of other languages fall back to",
            )
        return data

    def translations(self) -> dict[str, str]:
        """The non-English texts given, by language."""
        return {lang: text for lang in LANGUAGES[1:] if (text := getattr(self, lang))}

    def __str__(self) -> str:
        return self.en


def _has_english(prose: Prose) -> Prose:
    if not prose.en:
        raise ValueError("must not be empty")
    return prose


ProseText = Annotated[Prose, AfterValidator(_has_english)]
"""Prose whose English may not be empty."""
NO_PROSE = Prose(en="")


def value_of(sourced: Sourced[Any] | None) -> Any:
    return None if sourced is None else sourced.value


def check_range(
    sourced: Sourced[Any] | None,
    field: str,
    *,
    low: float,
    high: float | None = None,
    low_inclusive: bool = False,
) -> None:
    """Raise a field error unless the value (when given) lies above `low` and up to `high`."""
    if sourced is None:
        return
    value = sourced.value
    if value < low or (value == low and not low_inclusive):
        bound = f">= {low:g}" if low_inclusive else f"> {low:g}"
        raise field_error(field, f"must be {bound}, got {value:g}")
    if high is not None and value > high:
        raise field_error(field, f"must be <= {high:g}, got {value:g}")
