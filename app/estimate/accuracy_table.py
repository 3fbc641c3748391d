"""The shipped checking measurements at runtime: each class's ratios of measured to point
estimate (the prior of `app/estimate/record_ranges.py`), and each estimator version's
accuracy per class on them: (version, class key, measurements, median error, share within
30%, share the stated range held). Rows of earlier versions are kept.

Written by `python -m tests.accuracy.fit_server --write-ranges`: do not edit by hand.
"""

# fmt: off
CHECK_RATIOS: dict[str, tuple[float, ...]] = {
    "llama.cpp/*/*/*": (
        0.8436, 0.9321, 0.9603, 0.9632, 0.9658, 0.9778, 0.9973, 1.0014, 1.014, 1.016,
        1.0217, 1.0305, 1.0456, 1.0693, 1.1018, 1.1526, 1.1741, 1.1944, 1.2351, 1.5012,
    ),
    "llama.cpp/cuda-unified/single/c1": (
        0.9321, 0.9603, 0.9632, 0.9658, 0.9778, 1.0014, 1.014, 1.016, 1.0456, 1.0693,
        1.1944, 1.2351,
    ),
    "llama.cpp/cuda/single/c1": (
        1.1018, 1.1526, 1.5012,
    ),
    "llama.cpp/metal/single/c1": (
        1.0217, 1.1741,
    ),
    "llama.cpp/rocm+vulkan/single/c1": (
        0.8436, 0.9973, 1.0305,
    ),
    "mlx/*/*/*": (
        0.8549, 0.9833, 1.08,
    ),
    "mlx/metal/single/c1": (
        0.8549, 0.9833, 1.08,
    ),
    "sglang/*/*/*": (
        0.4305, 0.5765, 0.5895, 0.5974, 0.613, 0.7449, 1.1226, 1.2334, 1.4525, 1.617,
    ),
    "sglang/cuda/multi/cN": (
        0.4305, 0.5765, 0.613, 1.1226, 1.2334, 1.4525, 1.617,
    ),
    "sglang/rocm+vulkan/multi/cN": (
        0.5895, 0.5974, 0.7449,
    ),
    "vllm/*/*/*": (
        0.4213, 0.4509, 0.62, 0.7125, 0.713, 0.7134, 0.7318, 0.7408, 0.7871, 0.798,
        0.8017, 0.8551, 0.9432, 0.9553, 0.9582, 0.9602, 0.9709, 0.9753, 0.9761, 0.9775,
        0.9973, 1.0164, 1.2358, 1.3044, 1.3625, 1.6234, 1.9727,
    ),
    "vllm/cuda-unified/single/c1": (
        0.7125,
    ),
    "vllm/cuda/multi/c1": (
        0.8017, 0.9709, 0.9753, 0.9761, 0.9775, 0.9973, 1.0164,
    ),
    "vllm/cuda/multi/cN": (
        0.4213, 0.7134, 0.7318, 0.7871, 0.798, 0.9432,
    ),
    "vllm/cuda/single/c1": (
        0.9553,
    ),
    "vllm/rocm+vulkan/multi/c1": (
        1.3625,
    ),
    "vllm/rocm+vulkan/multi/cN": (
        0.4509, 0.62, 0.713, 0.7408, 0.8551, 0.9582, 0.9602, 1.2358, 1.3044, 1.6234,
        1.9727,
    ),
}
ACCURACY_HISTORY: tuple[tuple[str, str, int, float, float, float], ...] = (
    ('2026.12.1', 'llama.cpp/*/*/*', 20, 0.082, 1.0, 0.8),
    ('2026.12.1', 'llama.cpp/cuda-unified/single/c1', 12, 0.099, 1.0, 0.75),
    ('2026.12.1', 'llama.cpp/cuda/single/c1', 3, 0.028, 1.0, 0.667),
    ('2026.12.1', 'llama.cpp/metal/single/c1', 2, 0.071, 1.0, 1.0),
    ('2026.12.1', 'llama.cpp/rocm+vulkan/single/c1', 3, 0.123, 0.667, 1.0),
    ('2026.12.1', 'mlx/*/*/*', 3, 0.074, 1.0, 1.0),
    ('2026.12.1', 'mlx/metal/single/c1', 3, 0.074, 1.0, 1.0),
    ('2026.12.1', 'sglang/*/*/*', 10, 0.514, 0.2, 0.8),
    ('2026.12.1', 'sglang/cuda/multi/cN', 7, 0.31, 0.429, 0.857),
    ('2026.12.1', 'sglang/rocm+vulkan/multi/cN', 3, 0.866, 0.0, 1.0),
    ('2026.12.1', 'vllm/*/*/*', 27, 0.254, 0.63, 0.778),
    ('2026.12.1', 'vllm/cuda-unified/single/c1', 1, 0.523, 0.0, 1.0),
    ('2026.12.1', 'vllm/cuda/multi/c1', 7, 0.112, 0.857, 1.0),
    ('2026.12.1', 'vllm/cuda/multi/cN', 6, 0.431, 0.167, 0.833),
    ('2026.12.1', 'vllm/cuda/single/c1', 1, 0.136, 1.0, 1.0),
    ('2026.12.1', 'vllm/rocm+vulkan/multi/c1', 1, 0.204, 1.0, 1.0),
    ('2026.12.1', 'vllm/rocm+vulkan/multi/cN', 11, 0.31, 0.364, 0.727),
)
# fmt: on
