"""The evidence section of a detail page, summarised: every number it shows is computed
here, once, so the page and its JSON show the same digits.

Medians and ranges come from the database (`EvidenceQueries`); only the newest few accepted
records and the last known-good configuration are loaded, and pending records are a count
with a link to review them. Counts and medians are kept per catalog and records revision
(`FiguresCache`), so the cost of a page does not grow with the number of records.
"""

from dataclasses import asdict, dataclass
from typing import Any

from fastapi import Request
from sqlalchemy.orm import Session

from app.catalog.revision import Revisions
from app.models import Record
from app.records.evidence.queries import EvidenceQueries, EvidenceScope
from app.records.storage.per_revision import KeptPerRevision
from app.resolve import ResolvedRecipe
from app.resolve.figures import GB_DIGITS, SPEED_DIGITS

LATEST = 5  # accepted records listed on the page and its JSON; the rest are one link away
MEASURED = "measured"


@dataclass(frozen=True)
class Spread:
    """The median of a metric over accepted measurements, and the range it comes from."""

    median: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, row: Any, metric: str, digits: int) -> "Spread":
        values = (getattr(row, f"{metric}_{part}") for part in ("median", "low", "high"))
        return cls(*(None if v is None else round(v, digits) for v in values))


@dataclass(frozen=True)
class ContextSummary:
    """One request at a time at one context length."""

    context_length: int
    decode_tokens_per_s: Spread
    ttft_ms: Spread
    peak_memory_gb_per_gpu: float | None  # the largest seen
    records: int


@dataclass(frozen=True)
class ConcurrencySummary:
    """Several requests at once: per-request decode and TTFT, total throughput."""

    concurrency: int
    context_low: int
    context_high: int
    throughput_tokens_per_s: Spread
    decode_tokens_per_s: Spread
    ttft_ms: Spread
    records: int


@dataclass(frozen=True)
class EvidenceSummary:
    basis: str
    note: str
    # "route" when the summary covers one model file and runtime, else "profile": pages
    # word the note in the reader's language from this, not from the English note.
    scope: str
    by_context: tuple[ContextSummary, ...]
    by_concurrency: tuple[ConcurrencySummary, ...]


@dataclass(frozen=True)
class DetailEvidence:
    summary: EvidenceSummary
    latest: tuple[Record, ...]  # the newest accepted records, any profile
    accepted: int
    pending: int
    last_known_good: Record | None
    last_known_good_same_profile: bool


def scope_of(recipe: ResolvedRecipe) -> EvidenceScope:
    route = recipe.route
    return EvidenceScope(
        model_id=recipe.model.id,
        hardware_id=recipe.hardware.id,
        profile_id=recipe.profile.id,
        artifact_id=route.artifact.id if route else None,
        runtime_id=route.runtime.id if route else None,
    )


def summarise(queries: EvidenceQueries, scope: EvidenceScope) -> EvidenceSummary:
    by_context = tuple(
        ContextSummary(
            context_length=row.context_length,
            decode_tokens_per_s=Spread.of(row, "decode_tokens_per_s", SPEED_DIGITS),
            ttft_ms=Spread.of(row, "ttft_ms", 0),
            peak_memory_gb_per_gpu=(
                round(row.peak_memory_gb_per_gpu, GB_DIGITS) if row.peak_memory_gb_per_gpu else None
            ),
            records=row.records,
        )
        for row in queries.by_context(scope)
    )
    by_concurrency = tuple(
        ConcurrencySummary(
            concurrency=row.concurrency,
            context_low=row.context_low,
            context_high=row.context_high,
            throughput_tokens_per_s=Spread.of(row, "throughput_tokens_per_s", SPEED_DIGITS),
            decode_tokens_per_s=Spread.of(row, "decode_tokens_per_s", SPEED_DIGITS),
            ttft_ms=Spread.of(row, "ttft_ms", 0),
            records=row.records,
        )
        for row in queries.by_concurrency(scope)
    )
    covers = "route" if scope.artifact_id else "profile"
    route = "this route and profile" if covers == "route" else "this profile"
    note = (
        f"medians and ranges over the accepted records of {route} on this hardware that "
        "loaded and answered, computed from every such record"
    )
    return EvidenceSummary(MEASURED, note, covers, by_context, by_concurrency)


@dataclass(frozen=True)
class Figures:
    """What a detail page counts and summarises, as of one catalog and records revision."""

    counts: dict[str, int]  # records of the model on the hardware, by review state
    stamp: tuple[int, int, int]  # EvidenceQueries.accepted_stamp
    summary: EvidenceSummary


class FiguresCache:
    """Counts and summaries by scope, each kept with the revisions it was read at.

    Every record and every review moves the records revision, so within one pair of
    revisions the counts hold and a page is built without reading the configuration's
    records at all: its cost does not grow with their number. When either moves, the counts
    and the accepted stamp are read again (two index-only scans); the medians, which read
    every accepted measurement, are recomputed only when the stamp moved too, since pending
    submissions move the records revision but not the evidence. The revisions and the
    stamp come from the database on each build, so a change made by any process shows in all.
    """

    def __init__(self, size: int = 512) -> None:
        self._kept: KeptPerRevision[Figures] = KeptPerRevision(size)

    def figures(
        self, queries: EvidenceQueries, scope: EvidenceScope, revision: Revisions
    ) -> Figures:
        key = (queries.database, scope)
        kept = self._kept.get(key)
        if kept is not None and kept[0] == revision:
            return kept[1]
        counts = queries.state_counts(scope.model_id, scope.hardware_id)
        stamp = queries.accepted_stamp(scope.model_id, scope.hardware_id)
        if kept is not None and kept[1].stamp == stamp:
            summary = kept[1].summary
        else:
            summary = summarise(queries, scope)
        figures = Figures(counts, stamp, summary)
        self._kept.put(key, revision, figures)
        return figures


FIGURES = FiguresCache()


def load_detail_evidence(
    session: Session, recipe: ResolvedRecipe, revision: Revisions
) -> DetailEvidence:
    """The evidence section at `revision`, the catalog and records revisions the page is
    built at."""
    queries = EvidenceQueries(session)
    model_id, hardware_id = recipe.model.id, recipe.hardware.id
    figures = FIGURES.figures(queries, scope_of(recipe), revision)
    good = queries.last_known_good(model_id, hardware_id, recipe.profile.id)
    return DetailEvidence(
        summary=figures.summary,
        latest=tuple(queries.latest_accepted(model_id, hardware_id, LATEST)),
        accepted=figures.counts.get("accepted", 0),
        pending=figures.counts.get("pending", 0),
        last_known_good=good,
        last_known_good_same_profile=good is not None and good.profile_id == recipe.profile.id,
    )


def record_summary(request: Request, record: Record) -> dict:
    return {
        "id": record.id,
        "url": str(request.url_for("records:detail", record_id=record.id)),
        "review_state": record.review_state,
        "outcome": record.outcome,
        "artifact": record.artifact.slug,
        "runtime": record.runtime.slug,
        "runtime_version": record.runtime_version,
        "profile": record.profile.slug if record.profile else None,
        "flags": [flag["code"] for flag in record.flags],
    }


def evidence_links(request: Request, recipe: ResolvedRecipe) -> dict[str, str]:
    """The full lists the section summarises: accepted records, and pending ones to review."""
    where = {"model": recipe.model.slug, "hardware": recipe.hardware.slug}
    index = request.url_for("records:index")
    return {
        "accepted_url": str(index.include_query_params(**where, state="accepted")),
        "pending_url": str(index.include_query_params(**where, state="pending")),
        "all_url": str(index.include_query_params(**where)),
    }


def evidence_out(
    request: Request, recipe: ResolvedRecipe, evidence: DetailEvidence | None
) -> dict | None:
    """The JSON twin of the detail page's records section."""
    if evidence is None:
        return None
    good = evidence.last_known_good
    return {
        "summary": asdict(evidence.summary),
        "accepted": evidence.accepted,
        "pending": evidence.pending,
        "latest": [record_summary(request, r) for r in evidence.latest],
        **evidence_links(request, recipe),
        "last_known_good": None
        if good is None
        else {
            **record_summary(request, good),
            "command": good.command,
            "applied_values": good.applied_values,
            "same_profile": evidence.last_known_good_same_profile,
        },
    }
