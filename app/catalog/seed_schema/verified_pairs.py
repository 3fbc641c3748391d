"""Entries of ``verified_pairs.yaml``: official artifacts an official source says a runtime
serves."""

from __future__ import annotations

from typing import Literal

from pydantic import StrictStr

from app.catalog.seed_schema.fields import Slug, StrictModel, Url, Version


class SeedVerifiedPair(StrictModel):
    """An official artifact and a runtime version range that an official source says works.

    Community quantizations are verified by accepted records, not here.
    """

    artifact: Slug
    runtime: Slug
    min_version: Version | None  # null when the source states no release; the note says why
    max_version: Version | None = None
    source: Literal["official"] = "official"
    source_url: Url
    note: StrictStr = ""
