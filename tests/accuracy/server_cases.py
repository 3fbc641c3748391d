"""The server measurements (`servers.yaml`) run through the estimator as a user's question
would be: a model by its config, a GPU by its figures, vLLM or SGLang, a concurrency and a
request shape, answered by `app.estimate.estimate` and `load_estimate`, unchanged."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import msgspec
import yaml

from app.estimate import (
    ArtifactSpec,
    BudgetRule,
    EstimateError,
    HardwareSpec,
    ModelSpec,
    Plan,
    RuntimeSpec,
    estimate,
)
from app.estimate.ranges.classes import MIN_CHECKS, MIN_PUBLISHERS, RangeClass
from app.estimate.ranges.from_records import RangeBook
from app.estimate.speed.coefficients import Coefficients
from app.estimate.speed.load import LoadEstimate, RequestShape, SpeedModel, load_estimate

SERVERS = Path(__file__).with_name("servers.yaml")
ASSUMED_SHAPE = (1000, 500)
RUNTIMES = ("vllm", "sglang")


@dataclass(frozen=True)
class ServerCase:
    """One measured row and the estimator's inputs for it."""

    source: str
    publisher: str
    label: str
    runtime: str
    platform: str
    quant: str  # the weight format, as servers.yaml names it
    interconnect: str  # the GPUs' link, from servers.yaml's hardware
    gpus: int  # GPUs of one replica
    replicas: int
    concurrency: int  # requests in flight per replica
    prompt: int
    output: int
    decode: float | None  # measured tokens/s per request
    throughput: float | None  # measured output tokens/s, all replicas
    ttft_ms: float | None
    fitting: bool
    speed: SpeedModel

    @property
    def segment(self) -> str:
        gpus = "multi-GPU" if self.gpus > 1 else "single GPU"
        load = "concurrency 1" if self.concurrency == 1 else "concurrency >1"
        return f"{self.runtime}/{self.platform}/{gpus}/{load}"


def publisher_of(case: ServerCase) -> str:
    """Who published a row: the InferenceX bot's runs are InferenceX's; a GitHub user is
    one publisher across the issues they wrote in."""
    if "InferenceX" in case.publisher:
        return "SemiAnalysis InferenceX"
    if case.publisher.startswith("github:"):
        return case.publisher.split()[0]
    return case.publisher


@cache
def _data() -> dict:
    return yaml.safe_load(SERVERS.read_text())


def _model(key: str) -> ModelSpec:
    m = _data()["models"][key]
    moe = "experts" in m
    mla = "kv_lora_rank" in m
    return ModelSpec(
        slug=key,
        params_total_b=m["params_b"],
        params_active_b=m.get("active_b", m["params_b"]),
        is_moe=moe,
        native_context=131072,
        num_layers=m["layers"],
        num_attention_heads=m["heads"],
        num_kv_heads=m.get("kv_heads"),
        head_dim=m.get("head_dim", 128),
        hidden_size=m["hidden"],
        attention="mla" if mla else "gqa",
        kv_lora_rank=m.get("kv_lora_rank"),
        qk_rope_head_dim=m.get("qk_rope_head_dim"),
        experts=m.get("experts"),
        active_experts=m.get("active_experts"),
        moe_layers=m.get("moe_layers"),
        mtp_layers=m.get("mtp_layers", 0),
    )


def _artifact(row: dict, key: str, model: ModelSpec) -> ArtifactSpec:
    m = _data()["models"][key]
    bits = _data()["quant_bits"][row["quant"]]
    # A stated file size is that of the quant the model's own files use (gpt-oss: MXFP4).
    stated = "file_gb" in m and m.get("file_quant", row["quant"]) == row["quant"]
    size = int(m["file_gb"] * 1e9) if stated else None
    if size is None and "vocab" in m and row["quant"] in _data()["linear_only_quants"]:
        embeddings = 2 * m["vocab"] * m["hidden"] / 1e9  # input table and output head, 16-bit
        size = int(((m["params_b"] - embeddings) * bits / 8 + embeddings * 2) * 1e9)
    return ArtifactSpec(f"{key}-{row['quant']}", "safetensors", row["quant"], bits, size)


def _runtime(slug: str) -> RuntimeSpec:
    return RuntimeSpec(
        slug=slug,
        platforms=frozenset({"cuda", "rocm"}),
        formats=frozenset({"safetensors"}),
        budget=BudgetRule("vllm_fraction", 0.9),
        tensor_parallel=True,
        kv_dtypes=("auto", "fp8"),
        cuda_graphs=True,
    )


def _hardware(name: str, gpus: int) -> HardwareSpec:
    h = _data()["hardware"][name]
    return HardwareSpec(
        slug=f"{gpus}x-{name}",
        platform=h["platform"],
        unified_memory=False,
        gpu_count=gpus,
        memory_gb_per_gpu=h["memory_gb"],
        usable_gb_per_gpu=h["memory_gb"] * 0.9,
        bandwidth_gb_s_per_gpu=h["bandwidth_gb_s"],
        bf16_tflops_per_gpu=h["bf16_tflops"],
        interconnect=h["link"],
    )


def _measured_decode(row: dict) -> float | None:
    if row.get("decode_tokens_per_s_per_request"):
        return float(row["decode_tokens_per_s_per_request"])
    latency = row.get("tpot_ms") or row.get("itl_ms")
    return 1000 / float(latency) if latency else None


def _case(row: dict) -> ServerCase | None:
    data = _data()
    key = data["model_names"].get(row["model"])
    concurrency = row.get("concurrency")
    if key is None or row["runtime"] not in RUNTIMES or row.get("speculative"):
        return None
    if not isinstance(concurrency, int) or concurrency < 1:
        return None
    if (row.get("dp") or 1) > 1 and row.get("ep"):
        # Attention in data-parallel replicas over experts shared by all of them: each GPU
        # holds an eighth of the experts, not a replica's whole model, which the step
        # model's replicas of one tensor-parallel group cannot describe.
        return None
    decode, throughput = _measured_decode(row), row.get("output_throughput_tokens_per_s")
    if decode is None and throughput is None:
        return None
    replicas = row.get("dp") or 1
    tp = row.get("tp") or max(1, (row.get("gpus") or 1) // replicas)
    prompt = row.get("input_tokens") or ASSUMED_SHAPE[0]
    output = row.get("output_tokens") or ASSUMED_SHAPE[1]
    model = _model(key)
    hardware = _hardware(row["hardware"], tp)
    # A row run without CUDA graphs (`--enforce-eager`) is asked as such; else the runtime's own.
    graphs = False if row.get("cuda_graphs") is False else None
    plan = Plan(context=prompt + output, concurrency=1, tensor_parallel=tp, cuda_graphs=graphs)
    try:
        found = estimate(
            model, _artifact(row, key, model), _runtime(row["runtime"]), hardware, plan
        )
    except EstimateError:
        return None
    speed = found.speed_model
    if speed is None:
        return None
    if row.get("ep"):
        step = msgspec.structs.replace(speed.step, expert_parallel=int(row["ep"]))
        speed = msgspec.structs.replace(speed, step=step)
    return ServerCase(
        source=row["source"],
        publisher=row["publisher"],
        label=f"{key} {row['quant']} {tp}x{row['hardware']} {row['runtime']} c{concurrency}",
        runtime=row["runtime"],
        platform=speed.platform,
        quant=row["quant"],
        interconnect=hardware.interconnect,
        gpus=tp,
        replicas=replicas,
        concurrency=max(1, math.ceil(concurrency / replicas)),
        prompt=prompt,
        output=output,
        decode=decode,
        throughput=float(throughput) if throughput else None,
        ttft_ms=row.get("ttft_ms"),
        fitting=row["publisher"] in data["fitting_publishers"],
        speed=speed,
    )


def _table_rows(table: dict) -> list[dict]:
    """A table's lines as rows: the table's own fields, each line's columns, and the line's
    run page as its source where the table has one per run."""
    shared = {k: v for k, v in table.items() if k not in ("columns", "rows", "run_source")}
    rows = []
    for values in table["rows"]:
        row = {**shared, **dict(zip(table["columns"], values, strict=True))}
        if "run" in row:
            row["source"] = table["run_source"].format(run=row.pop("run"))
        rows.append(row)
    return rows


def server_rows() -> list[dict]:
    """Every measured row: the listed ones, then each table's."""
    tables = _data().get("tables", [])
    return _data()["rows"] + [row for table in tables for row in _table_rows(table)]


@cache
def server_cases() -> tuple[ServerCase, ...]:
    return tuple(c for c in (_case(row) for row in server_rows()) if c is not None)


@dataclass(frozen=True)
class ServerOutcome:
    case: ServerCase
    load: LoadEstimate

    def _error(self, low: float, high: float, measured: float | None) -> float | None:
        if measured is None:
            return None
        return abs((low + high) / 2 - measured) / measured

    @property
    def decode_error(self) -> float | None:
        return self._error(self.load.decode.low, self.load.decode.high, self.case.decode)

    @property
    def throughput_error(self) -> float | None:
        replicas = self.case.replicas
        band = self.load.throughput
        return self._error(band.low * replicas, band.high * replicas, self.case.throughput)

    @property
    def ttft_error(self) -> float | None:
        band = self.load.ttft_burst_ms  # the published runs' clients start in step
        return self._error(band.low, band.high, self.case.ttft_ms)

    @property
    def decode_covered(self) -> bool | None:
        d = self.case.decode
        return None if d is None else self.load.decode.low <= d <= self.load.decode.high

    @property
    def decode_ratio(self) -> float | None:
        """Measured over the point estimate (the range's middle before its class's spread)."""
        if self.case.decode is None:
            return None
        return self.case.decode / self.load.decode_point


class _PointClasses(dict):
    """Every class key's range as the point itself (low = high = 1)."""

    def get(self, key, default=None):
        return RangeClass(key, 1.0, 1.0, MIN_CHECKS, None, publishers=MIN_PUBLISHERS)


def _point_book() -> RangeBook:
    book = RangeBook({})
    book.classes = _PointClasses()
    return book


POINT_BOOK = _point_book()


def server_outcome(
    case: ServerCase, coefficients: Coefficients | None = None, point: bool = False
) -> ServerOutcome:
    """The estimator's figures for a case; with `point`, the point estimates (every
    decode and throughput band collapsed to its middle before its class's spread), as the
    coefficients are fitted on them apart from the ranges."""
    speed = case.speed
    if coefficients is not None:
        step = msgspec.structs.replace(speed.step, coefficients=coefficients)
        speed = msgspec.structs.replace(speed, step=step)
    if point:
        speed = msgspec.structs.replace(speed, ranges=POINT_BOOK)
    shape = RequestShape(case.prompt, case.output)
    return ServerOutcome(case, load_estimate(speed, case.concurrency, shape))


@dataclass(frozen=True)
class ServerSummary:
    count: int
    median_error: float
    within_30: float
    coverage: float | None


def summarize_decode(outcomes: Iterable[ServerOutcome]) -> ServerSummary | None:
    found = [o for o in outcomes if o.decode_error is not None]
    if not found:
        return None
    errors = [o.decode_error for o in found]
    return ServerSummary(
        len(found),
        statistics.median(errors),
        sum(e <= 0.3 for e in errors) / len(errors),
        sum(bool(o.decode_covered) for o in found) / len(found),
    )


def summarize_throughput(outcomes: Iterable[ServerOutcome]) -> ServerSummary | None:
    return _summary([o.throughput_error for o in outcomes])


def summarize_ttft(outcomes: Iterable[ServerOutcome]) -> ServerSummary | None:
    return _summary([o.ttft_error for o in outcomes])


def _summary(found: list[float | None]) -> ServerSummary | None:
    errors = [e for e in found if e is not None]
    if not errors:
        return None
    return ServerSummary(
        len(errors), statistics.median(errors), sum(e <= 0.3 for e in errors) / len(errors), None
    )
