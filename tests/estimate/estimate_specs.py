"""Specs for the estimator tests, copied from published model configs and hardware sheets."""

from __future__ import annotations

from dataclasses import replace

from app.estimate import ArtifactSpec, BudgetRule, HardwareSpec, ModelSpec, Route, RuntimeSpec

GIB = 1024**3

# ---------------------------------------------------------------- models (published configs)
LLAMA_8B = ModelSpec(
    slug="llama-3.1-8b-instruct",
    params_total_b=8.03,
    params_active_b=8.03,
    is_moe=False,
    native_context=131072,
    num_layers=32,
    num_attention_heads=32,
    num_kv_heads=8,
    head_dim=128,
    hidden_size=4096,
    intermediate_size=14336,
)
LLAMA_70B = ModelSpec(
    slug="llama-3.1-70b-instruct",
    params_total_b=70.55,
    params_active_b=70.55,
    is_moe=False,
    native_context=131072,
    num_layers=80,
    num_attention_heads=64,
    num_kv_heads=8,
    head_dim=128,
    hidden_size=8192,
    intermediate_size=28672,
)
DEEPSEEK_V3 = ModelSpec(
    slug="deepseek-v3",
    params_total_b=671,
    params_active_b=37,
    is_moe=True,
    native_context=163840,
    num_layers=61,
    num_attention_heads=128,
    num_kv_heads=128,
    hidden_size=7168,
    intermediate_size=18432,
    attention="mla",
    kv_lora_rank=512,
    qk_rope_head_dim=64,
)
GLM_45 = ModelSpec(
    slug="glm-4.5",
    params_total_b=355,
    params_active_b=32,
    is_moe=True,
    native_context=131072,
    num_layers=92,
    num_attention_heads=96,
    num_kv_heads=8,
    head_dim=128,
    hidden_size=5120,
    intermediate_size=12288,
)
GPT_OSS_120B = ModelSpec(
    slug="gpt-oss-120b",
    params_total_b=117,
    params_active_b=5.1,
    is_moe=True,
    native_context=131072,
    num_layers=36,
    num_attention_heads=64,
    num_kv_heads=8,
    head_dim=64,
    hidden_size=2880,
    intermediate_size=2880,
    sliding_window=128,
    sliding_window_layers=18,
)
# 12 of 48 layers are full attention; the linear state is a test figure (36 DeltaNet layers x
# 32 value heads x 128 x 128 fp32), not a published one.
QWEN3_NEXT = ModelSpec(
    slug="qwen3-next-80b-a3b",
    params_total_b=80,
    params_active_b=3,
    is_moe=True,
    native_context=262144,
    num_layers=48,
    num_attention_heads=16,
    num_kv_heads=2,
    head_dim=256,
    hidden_size=2048,
    attention="hybrid_linear",
    full_attention_layers=12,
    linear_state_bytes_per_seq=36 * 32 * 128 * 128 * 4,
)
# A 320B-total / 18B-active MoE; the attention shapes are illustrative.
MOE_320B = ModelSpec(
    slug="moe-320b-a18b",
    params_total_b=320,
    params_active_b=18,
    is_moe=True,
    native_context=131072,
    num_layers=64,
    num_attention_heads=64,
    num_kv_heads=4,
    head_dim=128,
    hidden_size=6144,
    intermediate_size=12288,
)

# ---------------------------------------------------------------- artifacts
LLAMA_8B_Q4_K_M = ArtifactSpec("llama-3.1-8b-q4_k_m", "gguf", "q4_k_m", 4.8944)
LLAMA_70B_Q4_K_M = ArtifactSpec("llama-3.1-70b-q4_k_m", "gguf", "q4_k_m", 4.89)
LLAMA_70B_BF16 = ArtifactSpec("llama-3.1-70b", "safetensors", "bf16", 16.0, official=True)
DEEPSEEK_V3_FP8 = ArtifactSpec("deepseek-v3", "safetensors", "fp8", 8.0, official=True)
MOE_320B_BF16 = ArtifactSpec("moe-320b", "safetensors", "bf16", 16.0, official=True)
MOE_320B_MLX_4BIT = ArtifactSpec("moe-320b-mlx-4bit", "mlx", "mlx-4bit", 4.5)
MOE_320B_Q4_K_M = ArtifactSpec("moe-320b-q4_k_m", "gguf", "q4_k_m", 4.5)

# ---------------------------------------------------------------- runtimes
VLLM = RuntimeSpec(
    slug="vllm",
    platforms=frozenset({"cuda", "rocm"}),
    formats=frozenset({"safetensors"}),
    budget=BudgetRule("vllm_fraction", fraction=0.90),
    tensor_parallel=True,
    kv_dtypes=("auto", "fp8", "fp8_e4m3", "fp8_e5m2"),
    cuda_graphs=True,
    default_prefill_tokens=8192,
)
SGLANG = RuntimeSpec(
    slug="sglang",
    platforms=frozenset({"cuda", "rocm"}),
    formats=frozenset({"safetensors"}),
    budget=BudgetRule("sglang_static"),
    tensor_parallel=True,
    kv_dtypes=("auto", "fp8_e4m3"),
    cuda_graphs=True,
    default_prefill_tokens=8192,
)
LLAMA_CPP = RuntimeSpec(
    slug="llama.cpp server",
    platforms=frozenset({"cuda", "rocm", "metal", "vulkan", "cpu"}),
    formats=frozenset({"gguf"}),
    budget=BudgetRule("fixed_margin", margin_gb=1.074),
    kv_dtypes=("auto", "fp16", "q8_0", "q4_0"),
    default_prefill_tokens=512,
)
MLX_LM = RuntimeSpec(
    slug="mlx-lm server",
    platforms=frozenset({"metal"}),
    formats=frozenset({"mlx"}),
    budget=BudgetRule("fixed_margin", margin_gb=2.0),
    default_prefill_tokens=2048,
)

# ---------------------------------------------------------------- hardware (per GPU figures)
RTX_4090 = HardwareSpec(
    slug="rtx-4090",
    platform="cuda",
    unified_memory=False,
    gpu_count=1,
    memory_gb_per_gpu=24,
    usable_gb_per_gpu=22.5,
    bandwidth_gb_s_per_gpu=1008,
    bf16_tflops_per_gpu=165.2,
)
H100 = HardwareSpec(
    slug="h100-sxm",
    platform="cuda",
    unified_memory=False,
    gpu_count=1,
    memory_gb_per_gpu=80,
    usable_gb_per_gpu=72,
    bandwidth_gb_s_per_gpu=3350,
    bf16_tflops_per_gpu=989,
)
H200_X8 = HardwareSpec(
    slug="8x-h200",
    platform="cuda",
    unified_memory=False,
    gpu_count=8,
    memory_gb_per_gpu=141,
    usable_gb_per_gpu=126.9,
    bandwidth_gb_s_per_gpu=4800,
    bf16_tflops_per_gpu=989,
    interconnect="nvswitch",
)
DGX_SPARK = HardwareSpec(
    slug="dgx-spark",
    platform="cuda",
    unified_memory=True,
    gpu_count=1,
    memory_gb_per_gpu=128,
    usable_gb_per_gpu=116,
    bandwidth_gb_s_per_gpu=273,
)
MAC_STUDIO_256 = HardwareSpec(
    slug="mac-studio-m5-ultra-256gb",
    platform="metal",
    unified_memory=True,
    gpu_count=1,
    memory_gb_per_gpu=256,
    usable_gb_per_gpu=236,
    bandwidth_gb_s_per_gpu=819,
)
L40S_X4_PCIE = HardwareSpec(
    slug="4x-l40s",
    platform="cuda",
    unified_memory=False,
    gpu_count=4,
    memory_gb_per_gpu=48,
    usable_gb_per_gpu=43.2,
    bandwidth_gb_s_per_gpu=864,
    bf16_tflops_per_gpu=362,
    interconnect="pcie",
)


def route(artifact: ArtifactSpec, runtime: RuntimeSpec, verified: bool = True) -> Route:
    """A route, verified unless said otherwise."""
    return Route(artifact=artifact, runtime=runtime, verified=verified)


def with_usable(hardware: HardwareSpec, usable_gb: float) -> HardwareSpec:
    """The same hardware with a different usable figure."""
    return replace(hardware, usable_gb_per_gpu=usable_gb)
