"""Many records at once, inserted through SQLAlchemy Core in one transaction, for the scale
tests and tests/perf/bench_detail_scale.py.

Each record measures what the benchmark measures: one request at three context lengths,
then a ramp of concurrent requests at the shortest, with figures spread around realistic
values for GLM-5.3-Flash FP8 on 8x H200.
"""

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from app.catalog.revision import bump_records_revision, bump_revision
from app.models import Artifact, Hardware, LlmModel, Measurement, Profile, Record, Runtime

LENGTHS = (4096, 16384, 65536)
RAMP = (4, 16)


@dataclass(frozen=True)
class Target:
    """Catalog ids of one configuration: model, model file, runtime, hardware, profile."""

    model_id: int
    artifact_id: int
    runtime_id: int
    hardware_id: int
    profile_id: int
    other_profile_id: int


def target(
    session: Session,
    model: str,
    artifact: str,
    runtime: str,
    hardware: str,
    profile: str = "balanced",
    other_profile: str = "speed",
) -> Target:
    def id_of(entity: Any, slug: str) -> int:
        return session.scalars(select(entity.id).where(entity.slug == slug)).one()

    return Target(
        id_of(LlmModel, model),
        id_of(Artifact, artifact),
        id_of(Runtime, runtime),
        id_of(Hardware, hardware),
        id_of(Profile, profile),
        id_of(Profile, other_profile),
    )


@dataclass
class Inserted:
    """What was written, so a test can work out the expected figures itself."""

    records: list[dict[str, Any]] = field(default_factory=list)
    measurements: list[dict[str, Any]] = field(default_factory=list)


def measurements_of(rng: random.Random, record_id: int) -> list[dict[str, Any]]:
    decode = rng.gauss(92.0, 6.0)
    rows = []
    for length in LENGTHS:
        slower = 1 - length / 400_000
        rows.append(
            {
                "record_id": record_id,
                "context_length": length,
                "concurrency": 1,
                "repetitions": 3,
                "ttft_ms": round(rng.uniform(0.05, 0.07) * length, 1),
                "decode_tokens_per_s": round(decode * slower, 2),
                "itl_ms": round(1000 / (decode * slower), 2),
                "throughput_tokens_per_s": round(decode * slower, 2),
                "peak_memory_gb_per_gpu": round(rng.uniform(118.0, 121.0) + length / 20_000, 2),
                # A few runs lost their TTFT timing: medians skip what was not measured.
                **({"ttft_ms": None} if rng.random() < 0.05 else {}),
            }
        )
    for users in RAMP:
        each = decode * rng.uniform(0.55, 0.9) ** (users / 8)
        rows.append(
            {
                "record_id": record_id,
                "context_length": LENGTHS[0],
                "concurrency": users,
                "repetitions": 1,
                "ttft_ms": round(rng.uniform(300, 900) * users / 4, 1),
                "decode_tokens_per_s": round(each, 2),
                "itl_ms": round(1000 / each, 2),
                "throughput_tokens_per_s": round(each * users, 2),
                "peak_memory_gb_per_gpu": round(rng.uniform(121.0, 124.0), 2),
            }
        )
    return rows


def insert_records(
    session: Session,
    where: Target,
    count: int,
    *,
    accepted_share: float = 0.5,
    seed: int = 7,
    start: datetime | None = None,
    same_stamp_every: int = 1,
    pending_only: bool = False,
) -> Inserted:
    """`count` records of `where`, newest last, in one transaction; the catalog revision
    moves so revision-cached pages show them. Accepted records are mostly of the profile,
    some of another; a few accepted ones failed to load. `pending_only`: every record
    pending, as a stream of submissions would be, and the records revision alone moves."""
    if pending_only:
        accepted_share = 0.0
    rng = random.Random(seed)
    first_id = (session.scalar(select(func.max(Record.id))) or 0) + 1
    start = start or datetime.now(UTC) - timedelta(seconds=count + 60)
    done = Inserted()
    for number in range(count):
        record_id = first_id + number
        state = "accepted" if rng.random() < accepted_share else "pending"
        outcome = "load_failure" if state == "accepted" and rng.random() < 0.05 else "ok"
        profile = where.other_profile_id if rng.random() < 0.1 else where.profile_id
        done.records.append(
            {
                "id": record_id,
                "model_id": where.model_id,
                "artifact_id": where.artifact_id,
                "runtime_id": where.runtime_id,
                "runtime_version": f"0.5.{10 + number % 3}",
                "hardware_id": where.hardware_id,
                "gpu_count": 8,
                "profile_id": profile,
                "command": "python -m sglang.launch_server --tp 8",
                "applied_values": {},
                "environment": {},
                "outcome": outcome,
                "notes": "",
                "provenance": "bench",
                "provenance_detail": {},
                "idempotency_key": None,
                "submitted_by": "bulk",
                "flags": [],
                "review_state": state,
                "created_at": start + timedelta(seconds=number // same_stamp_every),
            }
        )
        if outcome == "ok":
            done.measurements += measurements_of(rng, record_id)
    session.execute(insert(Record), done.records)
    blank = {
        "itl_ms": None,
        "e2e_latency_ms": None,
        "kv_cache_usage_peak": None,
        "needle_accuracy": None,
        "token_count_source": None,
        "memory_source": None,
        "details": {},
    }
    session.execute(insert(Measurement), [{**blank, **m} for m in done.measurements])
    if pending_only:
        bump_records_revision(session)
    else:
        bump_revision(session)
    session.commit()
    return done
