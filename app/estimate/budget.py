"""What a runtime keeps for itself on each GPU: its reserve and the prefill workspace."""

from __future__ import annotations

from app.estimate.basis import Basis, Quantity
from app.estimate.errors import EstimateError
from app.estimate.messages import Code, Notes, message, plain
from app.estimate.setup import Setup
from app.estimate.specs import HardwareSpec, ModelSpec, RuntimeSpec
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
    if rule.kind == "vllm_fraction":
        fraction = setup.memory_fraction or rule.fraction
        return _fraction_reserve(runtime, hardware, fraction, setup.cuda_graphs)
    if rule.kind == "sglang_static":
        if setup.memory_fraction is not None:
            # An explicit mem_fraction_static replaces SGLang's own reserve rule: the rest of
            # the card is left for activations, graphs and communication.
            return _fraction_reserve(runtime, hardware, setup.memory_fraction, cuda_graphs=False)
        return _sglang_reserve(hardware, setup)
    if rule.kind == "fixed_margin":
        return _fixed_reserve(runtime)
    raise EstimateError("runtime", f"{runtime.slug}: unknown budget rule {rule.kind!r}")


def withheld_gb(hardware: HardwareSpec) -> float:
    """Memory per GPU the hardware's usable figure already leaves out."""
    return hardware.memory_gb_per_gpu - hardware.usable_gb_per_gpu


def _fraction_reserve(
    runtime: RuntimeSpec, hardware: HardwareSpec, fraction: float | None, cuda_graphs: bool
) -> Quantity:
    """The runtime leaves (1 - fraction) of the GPU free, plus non-torch and graph memory."""
    if fraction is None or not 0 < fraction <= 1:
        raise EstimateError("runtime", f"{runtime.slug}: vllm_fraction needs a fraction in (0, 1]")
    left_free = (1 - fraction) * hardware.memory_gb_per_gpu
    beyond_usable = max(0.0, left_free - withheld_gb(hardware))
    graphs = CUDA_GRAPHS_GB if cuda_graphs else 0.0
    vllm = runtime.budget.kind == "vllm_fraction"
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


def _sglang_reserve(hardware: HardwareSpec, setup: Setup) -> Quantity:
    """SGLang's reserve, less what the usable figure already leaves out."""
    reserved_mib = sglang_reserved_mib(
        hardware.memory_gb_per_gpu, setup.prefill_tokens, setup.tensor_parallel
    )
    reserve = max(0.0, mib_to_gb(reserved_mib) - withheld_gb(hardware))
    note = message(
        Code.RESERVE_SGLANG, mib=round(reserved_mib), gb=round(mib_to_gb(reserved_mib), 2)
    )
    return Quantity(reserve, Basis.ASSUMED, (note,))


def _fixed_reserve(runtime: RuntimeSpec) -> Quantity:
    """A fixed margin per GPU, as the runtime documents it."""
    margin = runtime.budget.margin_gb
    if margin < 0:
        raise EstimateError("runtime", f"{runtime.slug}: margin_gb must not be negative")
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
