"""Numbers a careful reviewer would question. They are flagged on the record, never dropped:
a real result can beat a model (speculative decoding beats the bandwidth roofline)."""

import re
from typing import Any

from app.estimate.memory.weights import active_weight_bytes, weights_bytes
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Kind, english, register
from app.records.schemas import Flag, MeasurementIn, RecordIn
from app.records.storage.runtime_names import REPORTING_RUNTIME_NAMES
from app.records.storage.validation import Resolved

# No hardware decodes one request faster than this; a figure above it was read from
# answers that arrived in bursts (a TPOT of 0.05 ms or less).
MAX_DECODE_ONE_REQUEST = 20_000.0
# ITL and decode speed describe the same thing; beyond this factor one of them is wrong.
ITL_DECODE_TOLERANCE = 2.0
LOW_NEEDLE_ACCURACY = 0.5

# Each flag's words, registered as `record.flag.<code>`: the record keeps the English
# message and the params, and a page words the flag in its reader's language.
FLAG_WORDS: dict[str, Kind] = {
    "decode_above_roofline": register(
        "record.flag.decode_above_roofline",
        _l(
            "%(decode)s tok/s is above the %(roofline)s tok/s that %(hardware)s's memory "
            "bandwidth allows for the active weights of %(artifact)s; plausible only with "
            "speculative decoding, or if the figure is total rather than per request"
        ),
    ),
    "decode_above_roofline/assumed": register(
        "record.flag.decode_above_roofline_assumed",
        _l(
            "%(decode)s tok/s is above the %(roofline)s tok/s that %(hardware)s's memory "
            "bandwidth allows for the active weights of %(artifact)s (the catalog's bandwidth "
            "figure is assumed); plausible only with speculative decoding, or if the figure is "
            "total rather than per request"
        ),
    ),
    # An imported file's decode is a claim read from someone's run, as a reported figure is.
    "decode_contradicted": register(
        "record.flag.decode_contradicted",
        _l(
            "contradicted: %(hardware)s's memory bandwidth allows at most %(roofline)s tok/s "
            "for the active weights of %(artifact)s, below the %(decode)s tok/s imported; a "
            "decode this fast is read from answers that arrived in bursts, not measured"
        ),
    ),
    "decode_contradicted/assumed": register(
        "record.flag.decode_contradicted_assumed",
        _l(
            "contradicted: %(hardware)s's memory bandwidth allows at most %(roofline)s tok/s "
            "for the active weights of %(artifact)s (the catalog's bandwidth figure is "
            "assumed), below the %(decode)s tok/s imported; a decode this fast is read from "
            "answers that arrived in bursts, not measured"
        ),
    ),
    "decode_not_measurable": register(
        "record.flag.decode_not_measurable",
        _l(
            "%(decode)s tok/s for one request is faster than any hardware decodes: a time "
            "per token of %(tpot)s ms is read from answers that arrived in bursts (in one or "
            "a few pieces), not measured"
        ),
    ),
    "memory_above_card": register(
        "record.flag.memory_above_card",
        _l("%(memory)s GB per GPU is more than the %(card)s GB one card of %(hardware)s has"),
    ),
    "e2e_below_ttft": register(
        "record.flag.e2e_below_ttft",
        _l("end-to-end latency is shorter than the time to first token"),
    ),
    "itl_decode_mismatch": register(
        "record.flag.itl_decode_mismatch",
        _l(
            "an ITL of %(itl)s ms means about %(implied)s tok/s, but decode is given as "
            "%(decode)s tok/s"
        ),
    ),
    "needle_missed_but_ok": register(
        "record.flag.needle_missed_but_ok",
        _l(
            "the outcome says it answered, yet most needles were missed (outcome "
            "'wrong_answer' describes that)"
        ),
    ),
    "runtime_platform": register(
        "record.flag.runtime_platform",
        _l("%(runtime)s is listed for %(platforms)s, not %(platform)s hardware like %(hardware)s"),
    ),
    "runtime_below_min_version": register(
        "record.flag.runtime_below_min_version",
        _l(
            "%(runtime)s %(version)s is older than %(minimum)s, the first version the catalog "
            "knows to serve this family"
        ),
    ),
    "server_reported_mismatch": register(
        "record.flag.server_reported_mismatch",
        _l("the record says %(declared)s, the server reported %(reported)s"),
    ),
    "speed_on_load_failure": register(
        "record.flag.speed_on_load_failure",
        _l("the model failed to load, yet a decode speed is given"),
    ),
}


def flag_words(code: str, params: dict[str, Any]) -> Kind | None:
    """The registered words of a flag: its code's, or a variant its params name."""
    variant = params.get("variant")
    return FLAG_WORDS.get(f"{code}/{variant}" if variant else code)


def flag(code: str, field: str, **params: Any) -> Flag:
    """A flag with its English message and the figures a page words it from."""
    words = flag_words(code, params)
    assert words is not None, code
    said = words(**{k: v for k, v in params.items() if k != "variant"})
    return Flag(code=code, field=field, message=english(said), params=params)


def plausibility_flags(data: RecordIn, refs: Resolved, provenance: str | None = None) -> list[Flag]:
    """``provenance`` "import": a decode above the roofline is contradicted, as a reported
    figure is, rather than plausible with speculative decoding."""
    flags = setup_flags(data, refs)
    roofline = decode_roofline(data, refs)
    for index, point in enumerate(data.measurements):
        field = f"measurements.{index}"
        found = point_flags(field, point, data, refs, roofline)
        if provenance == "import":
            found = [f if f.code != "decode_above_roofline" else contradicted(f) for f in found]
        flags += found + burst_flags(field, point)
    return flags


def contradicted(above: Flag) -> Flag:
    params = dict(above.params)
    return flag("decode_contradicted", above.field, **params)


def burst_flags(field: str, point: MeasurementIn) -> list[Flag]:
    """A decode no hardware reaches for one request: read from bursts, whatever the card."""
    decode = point.decode_tokens_per_s
    if decode is None or decode <= MAX_DECODE_ONE_REQUEST:
        return []
    return [
        flag(
            "decode_not_measurable",
            f"{field}.decode_tokens_per_s",
            decode=round(decode, 1),
            tpot=round(1000 / decode, 4),
        )
    ]


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


def bandwidth_variant(refs: Resolved) -> dict[str, str]:
    return {"variant": "assumed"} if refs.hardware.bandwidth_basis == "assumed" else {}


def point_flags(
    field: str, point: MeasurementIn, data: RecordIn, refs: Resolved, roofline: float | None
) -> list[Flag]:
    flags: list[Flag] = []
    decode = point.decode_tokens_per_s
    if decode is not None and roofline is not None and decode > roofline:
        flags.append(
            flag(
                "decode_above_roofline",
                f"{field}.decode_tokens_per_s",
                decode=round(decode, 1),
                roofline=round(roofline, 1),
                hardware=refs.hardware.name,
                artifact=refs.artifact.slug,
                **bandwidth_variant(refs),
            )
        )
    memory = point.peak_memory_gb_per_gpu
    if memory is not None and memory > refs.hardware.memory_gb_per_gpu:
        flags.append(
            flag(
                "memory_above_card",
                f"{field}.peak_memory_gb_per_gpu",
                memory=round(memory, 1),
                card=round(refs.hardware.memory_gb_per_gpu),
                hardware=refs.hardware.name,
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
        flags.append(flag("e2e_below_ttft", f"{field}.e2e_latency_ms"))
    if point.itl_ms and point.decode_tokens_per_s:
        implied = 1000 / point.itl_ms
        ratio = max(implied, point.decode_tokens_per_s) / min(implied, point.decode_tokens_per_s)
        if ratio > ITL_DECODE_TOLERANCE:
            flags.append(
                flag(
                    "itl_decode_mismatch",
                    f"{field}.itl_ms",
                    itl=point.itl_ms,
                    implied=round(implied, 1),
                    decode=round(point.decode_tokens_per_s, 1),
                )
            )
    if (
        data.outcome == "ok"
        and point.needle_accuracy is not None
        and point.needle_accuracy < LOW_NEEDLE_ACCURACY
    ):
        flags.append(flag("needle_missed_but_ok", f"{field}.needle_accuracy"))
    return flags


def setup_flags(data: RecordIn, refs: Resolved) -> list[Flag]:
    flags: list[Flag] = []
    platform = refs.hardware.platform
    if platform not in refs.runtime.platforms:
        flags.append(
            flag(
                "runtime_platform",
                "runtime",
                runtime=refs.runtime.name,
                platforms=", ".join(refs.runtime.platforms),
                platform=platform,
                hardware=refs.hardware.name,
            )
        )
    minimum = refs.runtime.min_version
    if minimum and older_than(data.runtime_version, minimum):
        flags.append(
            flag(
                "runtime_below_min_version",
                "runtime_version",
                runtime=refs.runtime.name,
                version=data.runtime_version,
                minimum=minimum,
            )
        )
    if data.outcome == "load_failure" and any(m.decode_tokens_per_s for m in data.measurements):
        flags.append(flag("speed_on_load_failure", "outcome"))
    flags += reported_version_flags(data, refs)
    return flags


def reported_version_flags(data: RecordIn, refs: Resolved) -> list[Flag]:
    """The declared runtime and version against what the server told the client."""
    reported = data.pinned.server_reported
    if reported is None:
        return []
    same_runtime = reported.runtime == refs.runtime.slug
    if same_runtime and same_version(data.runtime_version, reported.version):
        return []
    name = REPORTING_RUNTIME_NAMES.get(reported.runtime, reported.runtime)
    return [
        flag(
            "server_reported_mismatch",
            "runtime_version" if same_runtime else "runtime",
            declared=f"{refs.runtime.name} {data.runtime_version}",
            reported=f"{name} {reported.version}",
        )
    ]


def same_version(declared: str, reported: str) -> bool:
    """0.12.0 and v0.12.0 are one version; a build suffix (b6100-1a2b) names the same build."""
    have, said = version_key(declared), version_key(reported)
    if have and said:
        return have == said
    return declared.strip().lower().lstrip("v") == reported.strip().lower().lstrip("v")


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def older_than(version: str, minimum: str) -> bool:
    """Compare dotted or build-number versions; unparseable ones are never called old."""
    have, need = version_key(version), version_key(minimum)
    return bool(have and need) and have < need
