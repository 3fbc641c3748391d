"""The figures a measured point is compared with: the decode range and point estimate at
the point's concurrency, the first-token range and the range class they belong to."""

from __future__ import annotations

import msgspec

from app.estimate.speed.load import SpeedModel, load_estimate


class PointEstimate(msgspec.Struct, frozen=True):
    class_key: str
    concurrency: int
    gpus: int
    decode_low: float
    decode_high: float
    decode_point: float  # the estimate before its class's range is put around it
    ttft_ms_low: float
    ttft_ms_high: float
    range_records: int  # accepted records that had moved the class's range
    basis: str = "estimated"  # what the figure rests on, as the pages name it


def point_estimate(speed: SpeedModel, concurrency: int) -> PointEstimate:
    """The estimate of one measured point, as the pages show it at that concurrency."""
    found = load_estimate(speed, concurrency)
    held = found.range
    return PointEstimate(
        class_key=held.key,
        concurrency=concurrency,
        gpus=found.gpus,
        decode_low=found.decode.low,
        decode_high=found.decode.high,
        decode_point=round(found.decode_point, 2),
        ttft_ms_low=found.ttft_ms.low,
        ttft_ms_high=found.ttft_ms.high,
        range_records=held.records,
    )
