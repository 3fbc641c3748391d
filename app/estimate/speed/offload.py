"""Partial offload: a model too big for the GPU that runs with part of its weights in system
memory, as llama.cpp (`--n-gpu-layers`, `--n-cpu-moe`) and Ollama do.

The GPU keeps the KV cache, the prefill workspace, the runtime's margin and as many weights
as fit in what is left; the rest stay in system memory and are read there by the CPU each
token. A dense model keeps whole layers on the GPU (`-ngl N`); an MoE keeps every layer's
attention and shared weights on the GPU and moves the routed experts of its first N layers
to system memory (`--n-cpu-moe N`), of which a token reads only the experts it routes to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import msgspec

from app.estimate.messages import Code, Message, message
from app.estimate.speed.llama_constants import DEFAULT_LAYERS
from app.estimate.units import GB

# Runtimes that can leave part of the weights in system memory.
OFFLOAD_RUNTIMES = frozenset({"llama-cpp", "ollama"})
# System memory the offloaded weights may take: three quarters of an assumed 64 GB desktop
# host (the operating system, the runtime and the page cache keep the rest).
ASSUMED_HOST_MEMORY_GB = 64
HOST_SHARE = 0.75


class OffloadPlan(msgspec.Struct, frozen=True):
    """Where the weights go and what a token then costs."""

    gpu_weights_gb: float
    host_weights_gb: float
    # Dense: layers on the GPU (-ngl); MoE: layers whose experts stay in system memory.
    # Both None where the layer count is unknown (split by bytes; no flags to give).
    gpu_layers: int | None
    cpu_moe_layers: int | None
    # Weight bytes one token reads from GPU memory and from system memory (KV aside).
    gpu_read_bytes: float = 0.0
    host_read_bytes: float = 0.0
    cards: int = 1  # cards the GPU's share is split over, evenly

    @property
    def gpu_weights_gb_per_card(self) -> float:
        return self.gpu_weights_gb / self.cards

    @property
    def flags(self) -> list[str]:
        """The llama.cpp flags that place the weights this way; none where the layer count
        is unknown."""
        if self.gpu_layers is None and self.cpu_moe_layers is None:
            return []
        if self.cpu_moe_layers is not None:
            return ["--n-gpu-layers", "999", "--n-cpu-moe", str(self.cpu_moe_layers)]
        return ["--n-gpu-layers", str(self.gpu_layers)]

    @property
    def summary(self) -> Message:
        """How much of the weights sits where, and in which layers."""
        gpu, host = round(self.gpu_weights_gb, 1), round(self.host_weights_gb, 1)
        if self.gpu_layers is None and self.cpu_moe_layers is None:
            return message(Code.OFFLOAD_SPLIT_BYTES, gpu=gpu, host=host)
        if self.cards > 1:
            cards = self.cards
            if self.cpu_moe_layers is not None:
                return message(
                    Code.OFFLOAD_SPLIT_EXPERTS_CARDS,
                    gpu=gpu,
                    cards=cards,
                    host=host,
                    layers=self.cpu_moe_layers,
                )
            layers = self.gpu_layers
            return message(
                Code.OFFLOAD_SPLIT_LAYERS_CARDS, gpu=gpu, cards=cards, host=host, layers=layers
            )
        if self.cpu_moe_layers is not None:
            return message(
                Code.OFFLOAD_SPLIT_EXPERTS, gpu=gpu, host=host, layers=self.cpu_moe_layers
            )
        return message(Code.OFFLOAD_SPLIT_LAYERS, gpu=gpu, host=host, layers=self.gpu_layers)


@dataclass(frozen=True)
class OffloadInputs:
    """What the split needs from an estimate that did not fit on the GPU."""

    runtime: str
    unified_memory: bool
    gpu_count: int
    num_layers: int | None
    is_moe: bool
    params_total_b: float
    params_active_b: float
    weights_gb: float
    active_weights_gb: float  # weights a token reads (all of a dense model)
    gpu_room_gb: float  # one card's usable memory less its KV, prefill workspace and margin
    cards: int = 1  # cards the layers are split over, each with `gpu_room_gb`


def plan_offload(job: OffloadInputs) -> OffloadPlan | None:
    """The split for a model that does not fit, or None where offloading cannot help:
    another runtime, unified memory (one pool already), several GPUs the layers are not
    split over, an unknown layer count, no room left beside the KV cache, or more to
    offload than the host holds. Over several cards each keeps as many weights as its room
    allows, and the rest stays in system memory."""
    if (
        job.runtime not in OFFLOAD_RUNTIMES
        or job.unified_memory
        or job.gpu_count != job.cards
        or job.gpu_room_gb <= 0
    ):
        return None
    excess = job.weights_gb - job.gpu_room_gb * job.cards
    if excess <= 0 or excess > ASSUMED_HOST_MEMORY_GB * HOST_SHARE:
        return None
    if not job.num_layers:
        # A model known by its counts alone: split in layers of the assumed count, as the
        # speed model assumes them, and say the split is by bytes (no layer to name).
        assumed = replace(job, num_layers=DEFAULT_LAYERS)
        found = plan_offload(assumed)
        if found is None:
            return None
        return msgspec.structs.replace(found, gpu_layers=None, cpu_moe_layers=None)
    if job.is_moe:
        return _moe_split(job, excess)
    return _dense_split(job)


def _dense_split(job: OffloadInputs) -> OffloadPlan | None:
    """Whole layers on the GPU; every offloaded layer is read from system memory."""
    layer_gb = job.weights_gb / job.num_layers
    gpu_layers = math.floor(job.gpu_room_gb / layer_gb) * job.cards
    if gpu_layers < 1:
        return None
    host_gb = job.weights_gb - gpu_layers * layer_gb
    gpu_gb = job.weights_gb - host_gb
    return OffloadPlan(gpu_gb, host_gb, gpu_layers, None, gpu_gb * GB, host_gb * GB, job.cards)


def _moe_split(job: OffloadInputs, excess_gb: float) -> OffloadPlan | None:
    """Experts of the first N layers in system memory. Routed experts are taken as the
    weights beyond the active ones (a lower bound), and a token reads the active share of
    the offloaded experts, active / total parameters."""
    active_share = job.params_active_b / job.params_total_b
    expert_gb = job.weights_gb * (1 - active_share)
    per_layer_gb = expert_gb / job.num_layers
    layers = math.ceil(excess_gb / per_layer_gb)
    if layers > job.num_layers:
        return None
    host_gb = layers * per_layer_gb
    host_read = host_gb * active_share
    gpu_read = (job.active_weights_gb - host_read) * GB
    return OffloadPlan(
        job.weights_gb - host_gb, host_gb, None, layers, gpu_read, host_read * GB, job.cards
    )
