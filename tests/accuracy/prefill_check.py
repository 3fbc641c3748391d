"""The published prefill rows (`prefill.yaml`) run through the step model's prefill
(`prefill_seconds`, via `load_estimate`): each row's first-token band and its point against
the measured prefill time, prompt tokens / prefill tokens per second.

    python -m tests.accuracy.prefill_check

prints one line per row: the measured seconds, the estimate's point (the middle of its two
prefill utilisations) and band, and the point's error. The test
(tests/estimate/test_prefill_accuracy.py) holds each checked row's point within
`POINT_TOLERANCE` and the measured time within `BAND_TOLERANCE` of the band."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from app.estimate.memory.kv import KvShape
from app.estimate.speed.coefficients import LINKS, coefficients_for
from app.estimate.speed.llama_constants import HOST_BANDWIDTH_GB_S, HOST_EFFICIENCY, HOST_LINK_GB_S
from app.estimate.speed.load import RequestShape, SpeedModel, load_estimate
from app.estimate.speed.step import StepInputs, prefill_seconds

PREFILL = Path(__file__).with_name("prefill.yaml")
# A checked row's point (the middle of the two utilisations' prefill) is within this factor
# of the measured time, and the measured time within this factor of the first-token band.
POINT_TOLERANCE = 1.6
BAND_TOLERANCE = 1.5
# The KV cache does not enter prefill; a row's decode step (in the first token) takes the
# common grouped-query layout, 8 KV heads of the model's head size, in BF16.
KV_HEADS = 8


@dataclass(frozen=True)
class PrefillCase:
    row: dict
    measured_s: float
    point_s: float
    band_s: tuple[float, float]

    @property
    def error(self) -> float:
        """The point's error against the measurement, as a signed share (+ = too slow)."""
        return self.point_s / self.measured_s - 1

    @property
    def in_band(self) -> bool:
        low, high = self.band_s
        return low / BAND_TOLERANCE <= self.measured_s <= high * BAND_TOLERANCE


@cache
def _data() -> dict:
    return yaml.safe_load(PREFILL.read_text())


def rows(checked_only: bool = True) -> list[dict]:
    return [row for row in _data()["rows"] if row["check"] or not checked_only]


def speed_model(row: dict) -> SpeedModel:
    """The step model's inputs for one row: the model by its config, the device by its
    figures, the runtime's shipped coefficients, and the row's micro-batch as the chunk."""
    data = _data()
    model = data["models"][row["model"]]
    device = data["hardware"][row["hardware"]]
    platform = device["platform"]
    file_bytes = row["file_gb"] * 1e9
    host_bytes = row.get("host_gb", 0.0) * 1e9
    params = model["params_b"] * 1e9
    active = model.get("active_b", model["params_b"]) * 1e9
    experts = model.get("experts", 1)
    layers, heads, head_dim = model["layers"], model["heads"], model["head_dim"]
    # A token's reads on the GPU: the active share of what the GPU holds.
    gpu_bytes = (file_bytes - host_bytes) * active / params
    kv = KvShape(KV_HEADS * head_dim * 2, layers, 0, None, 2, 1, 0)
    step = StepInputs(
        dense_bytes=gpu_bytes,
        expert_bytes=0.0,
        experts=experts,
        active_experts=model.get("active_experts", 1),
        kv=kv,
        active_params=active,
        attention_width=heads * head_dim,
        layers=layers,
        moe_layers=layers if experts > 1 else 0,
        hidden_size=heads * head_dim,
        tensor_parallel=1,
        expert_parallel=1,
        bandwidth_b_s=device["bandwidth_gb_s"] * 1e9,
        flops=device["bf16_tflops"] * 1e12,
        host_bytes=host_bytes * active / params,
        host_bandwidth_b_s=HOST_EFFICIENCY * HOST_BANDWIDTH_GB_S * 1e9,
        cuda_graphs=platform != "cuda",
        coefficients=coefficients_for(row["runtime"], platform),
        link=LINKS["none"],
        host_resident_bytes=host_bytes,
        host_link_b_s=HOST_LINK_GB_S * 1e9 if host_bytes else 0.0,
    )
    family = "mlx" if row["runtime"] == "mlx-lm" else "llama.cpp"
    return SpeedModel(step, family, platform, 1, row["prompt_tokens"], 1, row["ubatch"], None)


def case(row: dict) -> PrefillCase:
    model = speed_model(row)
    prompt = row["prompt_tokens"]
    slow, fast = model.coefficients.prefill_utilisation
    point = sum(prefill_seconds(model.step, prompt, model.prefill_chunk, u) for u in (slow, fast))
    found = load_estimate(model, 1, RequestShape(prompt_tokens=prompt, output_tokens=1))
    band = (found.ttft_ms.low / 1e3, found.ttft_ms.high / 1e3)
    measured = prompt / row["prefill_tokens_per_s"]
    return PrefillCase(row, measured, point / 2, band)


def cases() -> list[PrefillCase]:
    return [case(row) for row in rows()]


def main() -> None:
    print(f"{'row':58} {'measured s':>10} {'point s':>8} {'band s':>15} {'error':>7} in band")
    errors = []
    for found in cases():
        row = found.row
        label = f"{row['model']} {row['hardware']} {row['runtime']} {row['prompt_tokens']}"
        low, high = found.band_s
        errors.append(abs(math.log(found.point_s / found.measured_s)))
        print(
            f"{label:58} {found.measured_s:10.2f} {found.point_s:8.2f} "
            f"{low:7.2f}-{high:<7.2f} {found.error:+7.0%} {'yes' if found.in_band else 'no'}"
        )
    print(f"mean |log error| of the point: {sum(errors) / len(errors):.3f} over {len(errors)} rows")


if __name__ == "__main__":
    main()
