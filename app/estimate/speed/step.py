"""The step-time model: how long one decode step and one prefill take, term by term.

A decode step on each GPU is the sum of:
- reading the weights it holds, once for the whole batch: the dense part and, of an MoE,
  the experts the batch touches (about E·(1−(1−k/E)^B) of E experts for k active, batch B);
- reading the KV cache of every request in the batch at its depth;
- the compute roofline, when batch x active FLOPs (and attention at long context) take
  longer than the reads (the larger of the two counts, not both);
- fixed time: per layer (kernel launches, synchronisation; more without CUDA graphs), per
  MoE layer (routing, expert dispatch; more where the experts are stored quantized) and per
  expert each token is routed to there, per step (scheduler) and per request in the batch
  (sampling, bookkeeping);
- communication: two all-reduces per layer under tensor parallelism (latency + bytes over
  the link), an all-to-all per MoE layer under expert parallelism, and, where whole layers
  are split over cards (llama.cpp `--split-mode layer`), one hand-over of the activations
  from each card to the next per step.

Under a layer split the cards run one after another: each reads only its own layers, so a
step takes the time of all the reads in turn, as one card holding the whole model would
(the inputs then describe the whole model, not one card), plus the hand-overs. The second
card adds memory, not decode speed.

Prefill is compute-bound: active FLOPs and attention over the prompt at a calibrated
utilisation, plus each chunk's fixed and communication time. Requests that arrive together
are prefilled one after another, so the mean first-token time grows with their number.
Where part of the weights stays in system memory (partial offload), each chunk (llama.cpp's
micro-batch, `--ubatch-size`) of at least `OFFLOAD_MIN_BATCH` tokens also copies the
resident weights it routes to over the host link to the GPU, as llama.cpp does for a large
batch; a smaller chunk is computed where the weights are, the CPU reading them from system
memory.

The coefficients are per runtime family and platform (`app/estimate/speed/coefficients.py`,
fitted by `python -m tests.accuracy.fit_server` on cited measurements). The estimator turns
these seconds into the speed ranges every surface shows (`app/estimate/speed/load.py`).
"""

from __future__ import annotations

import math

import msgspec

from app.estimate.memory.kv import KvShape
from app.estimate.speed.coefficients import Coefficients, Link

# An MoE whose expert counts are unknown (a model described by its parameter counts) is
# taken to route 8 of 128 experts, the commonest layout of current MoE models (Qwen3,
# DeepSeek-V3 has 8 of 256, GLM 8 of 160).
ASSUMED_EXPERTS = (128, 8)
ACTIVATION_BYTES = 2  # BF16 activations in the all-reduce messages
# llama.cpp's CUDA back end computes a matmul of weights held in system memory on the GPU,
# copying the weights over, when the batch has at least this many tokens
# (`ggml_backend_cuda_device_offload_op`: min_batch_size = 32); below it the CPU computes it.
OFFLOAD_MIN_BATCH = 32
TERMS = ("weights", "kv_cache", "compute", "communication", "fixed", "offload")


class StepInputs(msgspec.Struct, frozen=True):
    """What one GPU holds and does for one route, worked out from the job once."""

    dense_bytes: float  # weights read every step, per GPU (attention, dense MLPs, shared)
    expert_bytes: float  # routed expert weights held, per GPU (0 for a dense model)
    experts: int  # routed experts per MoE layer (1 for a dense model)
    active_experts: float  # may be fractional where the layout is assumed
    kv: KvShape  # one sequence's KV cache on one GPU
    active_params: float  # parameters in each token's forward pass (all GPUs)
    attention_width: int  # heads x head dim (attention FLOPs per token of depth per layer)
    layers: int
    moe_layers: int
    hidden_size: int
    tensor_parallel: int
    expert_parallel: int
    bandwidth_b_s: float  # bytes/s per GPU
    flops: float | None  # peak BF16 FLOP/s per GPU
    host_bytes: float  # offloaded weights read from system memory per step
    host_bandwidth_b_s: float
    cuda_graphs: bool
    coefficients: Coefficients
    link: Link
    # Cards whole layers are split over, in turn (1: none); the bytes above are then the
    # whole model's, read one card after another.
    layer_split: int = 1
    quantized_experts: bool = False  # routed experts stored quantized (see Coefficients)
    # Partial offload: every weight byte kept in system memory (a prefill chunk copies those
    # it routes to over the host link), and that link's bytes/s (`HOST_LINK_GB_S`).
    host_resident_bytes: float = 0.0
    host_link_b_s: float = 0.0


class StepTime(msgspec.Struct, frozen=True):
    """Seconds of one step by term; `total` is their sum."""

    weights: float
    kv_cache: float
    compute: float
    communication: float
    fixed: float
    offload: float

    @property
    def total(self) -> float:
        return (
            self.weights + self.kv_cache + self.compute + self.communication + self.fixed
        ) + self.offload

    def shares(self) -> dict[str, float]:
        """Each term's share of the step, rounded to the percent shown."""
        total = self.total
        return {term: round(getattr(self, term) / total, 3) for term in TERMS}


def bytes_read(inputs: StepInputs, batch: int, depth: int, verify_tokens: int = 1) -> float:
    """Bytes one GPU reads in a decode step: the weights the batch touches and its KV."""
    touched = experts_touched(inputs.experts, inputs.active_experts, batch * verify_tokens)
    weights = inputs.dense_bytes + inputs.expert_bytes * touched
    return weights + batch * inputs.kv.bytes_at(depth)


def experts_touched(experts: int, active: float, batch: float) -> float:
    """Share of an MoE layer's experts that a batch routes to at least once (uniform routing)."""
    if experts <= 1:
        return 1.0
    return 1.0 - (1.0 - active / experts) ** batch


def decode_step(inputs: StepInputs, batch: int, depth: int, verify_tokens: int = 1) -> StepTime:
    """One decode step for `batch` requests at `depth` tokens of KV each; `verify_tokens` per
    request when a speculative step checks drafted tokens."""
    c = inputs.coefficients
    share = c.bandwidth_share_moe if inputs.experts > 1 else c.bandwidth_share_dense
    bandwidth = share * inputs.bandwidth_b_s
    tokens = batch * verify_tokens
    touched = experts_touched(inputs.experts, inputs.active_experts, tokens)
    weights = (inputs.dense_bytes + inputs.expert_bytes * touched) / bandwidth
    kv = batch * inputs.kv.bytes_at(depth) / bandwidth * c.kv_read_factor
    compute = _compute_excess(inputs, tokens, depth, weights + kv)
    fixed = step_fixed_s(inputs, eager=not inputs.cuda_graphs) + c.step_per_request_s * batch
    host = inputs.host_bytes / inputs.host_bandwidth_b_s if inputs.host_bytes else 0.0
    # Attention kernels slow every part of the step at long context beyond the KV bytes.
    slow = c.long_context(depth)
    communication = _communication(inputs, tokens)
    return StepTime(
        weights * slow, kv * slow, compute * slow, communication * slow, fixed * slow, host * slow
    )


def step_fixed_s(inputs: StepInputs, eager: bool) -> float:
    """A step's fixed time apart from its requests: per layer, per MoE layer and per expert a
    token is routed to in it (at one request the routed experts are small reads, each a
    latency more than its bytes), and per step."""
    c = inputs.coefficients
    per_moe_layer = c.moe_layer_s + inputs.active_experts * c.expert_s
    if inputs.quantized_experts:
        per_moe_layer += c.quantized_moe_layer_s
    return (
        inputs.layers * (c.layer_eager_s if eager else c.layer_s)
        + inputs.moe_layers * per_moe_layer
        + c.step_s
    )


def _compute_excess(inputs: StepInputs, tokens: int, depth: int, reads: float) -> float:
    """Time the step's math takes beyond the reads it overlaps with (0 while memory-bound)."""
    if inputs.flops is None:
        return 0.0
    flops = tokens * (2 * inputs.active_params + 4 * inputs.layers * inputs.attention_width * depth)
    seconds = flops / inputs.tensor_parallel / (inputs.coefficients.compute_share * inputs.flops)
    return max(0.0, seconds - reads)


def communication_s(inputs: StepInputs, tokens: int) -> float:
    """A step's communication time for `tokens` tokens (0 on one GPU)."""
    return _communication(inputs, tokens)


def _communication(inputs: StepInputs, tokens: int) -> float:
    """Two all-reduces per layer across TP ranks; an all-to-all each way per MoE layer
    across EP ranks; one hand-over of the activations between consecutive cards of a layer
    split. Each: the link's latency plus the bytes a rank sends over it."""
    link, tp, ep = inputs.link, inputs.tensor_parallel, inputs.expert_parallel
    message = tokens * inputs.hidden_size * ACTIVATION_BYTES
    seconds = 0.0
    if tp > 1:
        ring = 2 * (tp - 1) / tp  # a ring all-reduce sends this share of the message
        seconds += inputs.layers * 2 * (link.latency_s + ring * message / link.bandwidth_b_s)
    if ep > 1:
        sent = message * inputs.active_experts * (ep - 1) / ep
        seconds += inputs.moe_layers * 2 * (link.latency_s + sent / link.bandwidth_b_s)
    if inputs.layer_split > 1:
        seconds += (inputs.layer_split - 1) * (link.latency_s + message / link.bandwidth_b_s)
    return seconds * inputs.coefficients.communication_scale


def prefill_seconds(
    inputs: StepInputs, prompt: int, chunk: int, utilisation: float, prompts: float = 1
) -> float:
    """Time to prefill `prompts` prompts of `prompt` tokens, packed together into chunks of
    `chunk` tokens (as vLLM and SGLang batch the prefills of requests that arrive together),
    at a share of peak FLOPs, plus each chunk's move of the weights kept in system memory."""
    tokens = prompt * prompts
    chunks = max(1, math.ceil(tokens / max(1, chunk)))
    fixed = chunks * step_fixed_s(inputs, eager=True)
    communication = chunks * _communication(inputs, min(tokens, chunk))
    reads = chunks * (inputs.dense_bytes + inputs.expert_bytes) / inputs.bandwidth_b_s
    host = chunks * host_chunk_s(inputs, min(tokens, chunk))
    if inputs.flops is None:
        return reads + fixed + communication + host
    # Causal attention: each token attends to those before it, half the square on average.
    flops = prompts * (
        2 * inputs.active_params * prompt
        + 2 * inputs.layers * inputs.attention_width * (prompt * prompt)
    )
    compute = flops / inputs.tensor_parallel / (utilisation * inputs.flops)
    return max(compute, reads) + fixed + communication + host


def host_chunk_s(inputs: StepInputs, tokens: int) -> float:
    """Seconds one prefill chunk of `tokens` spends on the weights kept in system memory
    (0 without offload). From `OFFLOAD_MIN_BATCH` tokens llama.cpp copies them to the GPU
    and computes there: the bytes of the experts the chunk routes to (uniform routing; all
    of a dense layer) over the host link, one after the other with the compute. Below it
    the CPU computes them where they are, reading them at the host's bandwidth."""
    if not inputs.host_resident_bytes:
        return 0.0
    touched = experts_touched(inputs.experts, inputs.active_experts, tokens)
    if tokens < OFFLOAD_MIN_BATCH or not inputs.host_link_b_s:
        return inputs.host_resident_bytes * touched / inputs.host_bandwidth_b_s
    return inputs.host_resident_bytes * touched / inputs.host_link_b_s
