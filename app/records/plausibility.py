"""Numbers a careful reviewer would question. They are flagged on the record, never dropped:
a real result can beat a model (speculative decoding beats the bandwidth roofline)."""

import re

from app.estimate.weights import active_weight_bytes, weights_bytes
from app.records.schemas import Flag, MeasurementIn, RecordIn
from app.records.validation import Resolved

# ITL and decode speed describe the same thing; beyond this factor one of them is wrong.
ITL_DECODE_TOLERANCE = 2.0
LOW_NEEDLE_ACCURACY = 0.5


def plausibility_flags(data: RecordIn, refs: Resolved) -> list[Flag]:
    flags = setup_flags(data, refs)
    roofline = decode_roofline(data, refs)
    for index, point in enumerate(data.measurements):
        flags += point_flags(f"measurements.{index}", point, data, refs, roofline)
    return flags


def tensor_parallel(data: RecordIn, refs: Resolved) -> int:
    """TP as applied, else every GPU for runtimes that split tensors (one for layer splits)."""
    applied = data.applied_values.get("tensor_parallel")
    if isinstance(applied, int) and not isinstance(applied, bool) and applied >= 1:
        return applied
    return refs.gpu_count if refs.runtime.tensor_parallel else 1


def decode_roofline(data: RecordIn, refs: Resolved) -> float | None:
    """Hard ceiling of one request's decode speed: every active weight read once per token."""
    bandwidth = refs.hardware.bandwidth_gb_s_per_gpu
    if not bandwidth:
        return None
    model, artifact = refs.model.spec, refs.artifact.spec
    active = active_weight_bytes(model, artifact, weights_bytes(model, artifact))
    return bandwidth * 1e9 * tensor_parallel(data, refs) / active


def bandwidth_note(refs: Resolved) -> str:
    assumed = refs.hardware.bandwidth_basis == "assumed"
    return " (the catalog's bandwidth figure is assumed)" if assumed else ""


def point_flags(
    field: str, point: MeasurementIn, data: RecordIn, refs: Resolved, roofline: float | None
) -> list[Flag]:
    flags: list[Flag] = []
    decode = point.decode_tokens_per_s
    if decode is not None and roofline is not None and decode > roofline:
        flags.append(
            Flag(
                code="decode_above_roofline",
                field=f"{field}.decode_tokens_per_s",
                message=f"{decode:,.1f} tok/s is above the {roofline:,.1f} tok/s that "
                f"{refs.hardware.name}'s memory bandwidth allows for the active weights "
                f"of {refs.artifact.slug}{bandwidth_note(refs)}; plausible only with "
                "speculative decoding, or if the figure is total rather than per request",
            )
        )
    memory = point.peak_memory_gb_per_gpu
    if memory is not None and memory > refs.hardware.memory_gb_per_gpu:
        flags.append(
            Flag(
                code="memory_above_card",
                field=f"{field}.peak_memory_gb_per_gpu",
                message=f"{memory:,.1f} GB per GPU is more than the "
                f"{refs.hardware.memory_gb_per_gpu:,.0f} GB one card of "
                f"{refs.hardware.name} has",
            )
        )
    flags += consistency_flags(field, point, data)
    return flags


def consistency_flags(field: str, point: MeasurementIn, data: RecordIn) -> list[Flag]:
    flags: list[Flag] = []
    if (
        point.e2e_latency_ms is not None
        and point.ttft_ms is not None
        and point.e2e_latency_ms < point.ttft_ms
    ):
        flags.append(
            Flag(
                code="e2e_below_ttft",
                field=f"{field}.e2e_latency_ms",
                message="end-to-end latency is shorter than the time to first token",
            )
        )
    if point.itl_ms and point.decode_tokens_per_s:
        implied = 1000 / point.itl_ms
        ratio = max(implied, point.decode_tokens_per_s) / min(implied, point.decode_tokens_per_s)
        if ratio > ITL_DECODE_TOLERANCE:
            flags.append(
                Flag(
                    code="itl_decode_mismatch",
                    field=f"{field}.itl_ms",
                    message=f"an ITL of {point.itl_ms:g} ms means about {implied:,.1f} tok/s, but "
                    f"decode is given as {point.decode_tokens_per_s:,.1f} tok/s",
                )
            )
    if (
        data.outcome == "ok"
        and point.needle_accuracy is not None
        and point.needle_accuracy < LOW_NEEDLE_ACCURACY
    ):
        flags.append(
            Flag(
                code="needle_missed_but_ok",
                field=f"{field}.needle_accuracy",
                message="the outcome says it answered, yet most needles were missed "
                "(outcome 'wrong_answer' describes that)",
            )
        )
    return flags


def setup_flags(data: RecordIn, refs: Resolved) -> list[Flag]:
    flags: list[Flag] = []
    platform = refs.hardware.platform
    if platform not in refs.runtime.platforms:
        flags.append(
            Flag(
                code="runtime_platform",
                field="runtime",
                message=f"{refs.runtime.name} is listed for {', '.join(refs.runtime.platforms)}, "
                f"not {platform} hardware like {refs.hardware.name}",
            )
        )
    minimum = refs.runtime.min_version
    if minimum and older_than(data.runtime_version, minimum):
        flags.append(
            Flag(
                code="runtime_below_min_version",
                field="runtime_version",
                message=f"{refs.runtime.name} {data.runtime_version} is older than {minimum}, the "
                "first version the catalog knows to serve this family",
            )
        )
    if data.outcome == "load_failure" and any(m.decode_tokens_per_s for m in data.measurements):
        flags.append(
            Flag(
                code="speed_on_load_failure",
                field="outcome",
                message="the model failed to load, yet a decode speed is given",
            )
        )
    return flags


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def older_than(version: str, minimum: str) -> bool:
    """Compare dotted or build-number versions; unparseable ones are never called old."""
    have, need = version_key(version), version_key(minimum)
    return bool(have and need) and have < need
