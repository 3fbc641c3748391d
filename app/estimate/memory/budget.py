"""What a runtime keeps for itself on each GPU: its reserve and the prefill workspace."""

from __future__ import annotations

from functools import lru_cache

from app.estimate.basis import Basis, Quantity
from app.estimate.errors import EstimateError
from app.estimate.inputs.checked_plan import Setup
from app.estimate.inputs.specs import HardwareSpec, ModelSpec, RuntimeSpec
from app.estimate.messages import Code, Notes, message, plain
from app.estimate.units import GB, mib_to_gb

NON_TORCH_GB = 0.27  # ~0.25 GiB of NCCL and cuBLAS workspaces outside PyTorch's allocator
CUDA_GRAPHS_GB = 0.54  # ~0.5 GiB of captured CUDA graphs
SGLANG_FLOOR_MIB = 10 * 1024  # SGLang never reserves less than 10 GiB on GPUs above 60 GB
UNKNOWN_WORKSPACE_GB = 0.5

# (GPU memory below this many GB, SGLang's default cuda_graph_max_bs)
_SGLANG_GRAPH_BATCH = ((20, 8), (35, 24), (60, 32), (160, 256))


def runtime_reserve(runtime: RuntimeSpec, hardware: HardwareSpec, setup: Setup) -> Quantity:
    """Memory per GPU the runtime keeps out of the usable figure, in GB."""
    rule = runtime.budget
    memory, usable = hardware.memory_gb_per_gpu, hardware.usable_gb_per_gpu
    if rule.kind == "vllm_fraction":
        fraction = setup.memory_fraction or rule.fraction
        return _fraction_reserve(runtime.slug, True, memory, usable, fraction, setup.cuda_graphs)
    if rule.kind == "sglang_static":
        if setup.memory_fraction is not None:
            # An explicit mem_fraction_static replaces SGLang's own reserve rule: the rest of
            # the card is left for activations, graphs and communication.
            fraction = setup.memory_fraction
            return _fraction_reserve(runtime.slug, False, memory, usable, fraction, False)
        return _sglang_reserve(memory, usable, setup.prefill_tokens, setup.tensor_parallel)
    if rule.kind == "fixed_margin":
        return _fixed_reserve(runtime.slug, rule.margin_gb)
    raise EstimateError("runtime", f"{runtime.slug}: unknown budget rule {rule.kind!r}")


# The reserves below are worked out from a few numbers that most routes of a catalog share
# (a runtime on a card), so each distinct answer is kept: a catalog pass asks for thousands.
_RESERVES_KEPT = 1024


@lru_cache(maxsize=_RESERVES_KEPT, typed=True)
def _fraction_reserve(
    slug: str,
    vllm: bool,
    memory_gb: float,
    usable_gb: float,
    fraction: float | None,
    cuda_graphs: bool,
) -> Quantity:
    """The runtime leaves (1 - fraction) of the GPU free, plus non-torch and graph memory."""
    if fraction is None or not 0 < fraction <= 1:
        raise EstimateError("runtime", f"{slug}: vllm_fraction needs a fraction in (0, 1]")
    left_free = (1 - fraction) * memory_gb
    withheld = memory_gb - usable_gb  # what the usable figure already leaves out
    beyond_usable = max(0.0, left_free - withheld)
    graphs = CUDA_GRAPHS_GB if cuda_graphs else 0.0
    note: Notes = (
        message(
            Code.RESERVE_GPU_MEMORY_UTILIZATION if vllm else Code.RESERVE_MEMORY_FRACTION,
            fraction=plain(fraction),
            free=round(left_free, 2),
            beyond=round(beyond_usable, 2),
            non_torch=NON_TORCH_GB,
        ),
    )
    note += (message(Code.RESERVE_CUDA_GRAPHS, gb=CUDA_GRAPHS_GB),) if cuda_graphs else ()
    return Quantity(beyond_usable + NON_TORCH_GB + graphs, Basis.ASSUMED, note)


def sglang_cuda_graph_batch(memory_gb: float) -> int:
    """SGLang's default largest CUDA-graph batch for a GPU of this size."""
    for below_gb, batch in _SGLANG_GRAPH_BATCH:
        if memory_gb < below_gb:
            return batch
    return 512


def sglang_reserved_mib(memory_gb: float, prefill_tokens: int, tensor_parallel: int) -> float:
    """SGLang's reserved memory (MiB) when mem_fraction_static is not set."""
    reserved = (
        512
        + 1.5 * max(prefill_tokens, 2048)
        + 2 * sglang_cuda_graph_batch(memory_gb)
        + 1024 * tensor_parallel / 8
    )
    return max(reserved, SGLANG_FLOOR_MIB) if memory_gb > 60 else reserved


@lru_cache(maxsize=_RESERVES_KEPT, typed=True)
def _sglang_reserve(
    memory_gb: float, usable_gb: float, prefill_tokens: int, tensor_parallel: int
) -> Quantity:
    """SGLang's reserve, less what the usable figure already leaves out."""
    reserved_mib = sglang_reserved_mib(memory_gb, prefill_tokens, tensor_parallel)
    reserve = max(0.0, mib_to_gb(reserved_mib) - (memory_gb - usable_gb))
    note = message(
        Code.RESERVE_SGLANG, mib=round(reserved_mib), gb=round(mib_to_gb(reserved_mib), 2)
    )
    return Quantity(reserve, Basis.ASSUMED, (note,))


@lru_cache(maxsize=_RESERVES_KEPT, typed=True)
def _fixed_reserve(slug: str, margin: float) -> Quantity:
    """A fixed margin per GPU, as the runtime documents it."""
    if margin < 0:
        raise EstimateError("runtime", f"{slug}: margin_gb must not be negative")
    return Quantity(margin, Basis.ASSUMED, (message(Code.RESERVE_FIXED, gb=plain(margin)),))


def prefill_workspace(model: ModelSpec, runtime: RuntimeSpec, setup: Setup) -> Quantity:
    """Activation memory per GPU for one prefill chunk, in GB."""
    if runtime.budget.kind == "sglang_static":
        return Quantity(0.0, Basis.ASSUMED, (message(Code.WORKSPACE_IN_SGLANG_RESERVE),))
    if model.hidden_size is None:
        note = message(Code.WORKSPACE_HIDDEN_UNKNOWN, gb=UNKNOWN_WORKSPACE_GB)
        return Quantity(UNKNOWN_WORKSPACE_GB, Basis.ASSUMED, (note,))
    per_token = activation_bytes_per_token(model, setup.tensor_parallel)
    note = message(Code.WORKSPACE_PREFILL, tokens=setup.prefill_tokens, bytes=round(per_token))
    return Quantity(setup.prefill_tokens * per_token / GB, Basis.ASSUMED, (note,))


def activation_bytes_per_token(model: ModelSpec, tensor_parallel: int) -> float:
    """Peak 16-bit activation bytes of one prefill token on one GPU."""
    # Four hidden-sized buffers (residual, norm, attention in and out) plus the MLP's gate and
    # up projections. Logits are left out: the vocabulary is not part of the model data and
    # runtimes compute them for the last token of a chunk only.
    intermediate = model.intermediate_size or 4 * model.hidden_size
    return model.hidden_size * 2 * 4 + intermediate / tensor_parallel * 2 * 2
