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
        0.2602, 0.3575, 0.5607, 0.5886, 0.6607, 0.6848, 0.8813, 0.9552, 0.9707, 1.1081,
        1.1342, 1.19, 1.2177, 1.2187,
    ),
    "sglang/cuda/multi/c1": (
        0.8813, 0.9552, 0.9707, 1.1081,
    ),
    "sglang/cuda/multi/cN": (
        0.2602, 0.5607, 0.6848, 1.1342, 1.19, 1.2177, 1.2187,
    ),
    "sglang/rocm+vulkan/multi/cN": (
        0.3575, 0.5886, 0.6607,
    ),
    "vllm/*/*/*": (
        0.3377, 0.4303, 0.5, 0.6423, 0.6735, 0.6897, 0.7, 0.7066, 0.7103, 0.7302,
        0.7403, 0.7795, 0.8514, 0.8644, 0.8678, 0.8698, 0.9057, 0.9112, 0.9122, 0.9135,
        0.9276, 0.9479, 1.0698, 1.1173, 1.1434, 1.5547, 1.8229,
    ),
    "vllm/cuda-unified/single/c1": (
        0.6897,
    ),
    "vllm/cuda/multi/c1": (
        0.7403, 0.9057, 0.9112, 0.9122, 0.9135, 0.9276, 0.9479,
    ),
    "vllm/cuda/multi/cN": (
        0.3377, 0.6423, 0.6735, 0.7066, 0.7103, 0.8514,
    ),
    "vllm/cuda/single/c1": (
        0.8698,
    ),
    "vllm/rocm+vulkan/multi/c1": (
        1.1173,
    ),
    "vllm/rocm+vulkan/multi/cN": (
        0.4303, 0.5, 0.7, 0.7302, 0.7795, 0.8644, 0.8678, 1.0698, 1.1434, 1.5547,
        1.8229,
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
    ('2026.12.2', 'llama.cpp/*/*/*', 20, 0.082, 1.0, 0.8),
    ('2026.12.2', 'llama.cpp/cuda-unified/single/c1', 12, 0.099, 1.0, 0.75),
    ('2026.12.2', 'llama.cpp/cuda/single/c1', 3, 0.028, 1.0, 0.667),
    ('2026.12.2', 'llama.cpp/metal/single/c1', 2, 0.071, 1.0, 1.0),
    ('2026.12.2', 'llama.cpp/rocm+vulkan/single/c1', 3, 0.123, 0.667, 1.0),
    ('2026.12.2', 'mlx/*/*/*', 3, 0.074, 1.0, 1.0),
    ('2026.12.2', 'mlx/metal/single/c1', 3, 0.074, 1.0, 1.0),
    ('2026.12.2', 'sglang/*/*/*', 14, 0.298, 0.5, 0.714),
    ('2026.12.2', 'sglang/cuda/multi/c1', 4, 0.065, 1.0, 1.0),
    ('2026.12.2', 'sglang/cuda/multi/cN', 7, 0.261, 0.571, 0.857),
    ('2026.12.2', 'sglang/rocm+vulkan/multi/cN', 3, 0.529, 0.0, 1.0),
    ('2026.12.2', 'vllm/*/*/*', 27, 0.196, 0.778, 0.778),
    ('2026.12.2', 'vllm/cuda-unified/single/c1', 1, 0.341, 0.0, 1.0),
    ('2026.12.2', 'vllm/cuda/multi/c1', 7, 0.015, 1.0, 1.0),
    ('2026.12.2', 'vllm/cuda/multi/cN', 6, 0.341, 0.167, 0.833),
    ('2026.12.2', 'vllm/cuda/single/c1', 1, 0.063, 1.0, 1.0),
    ('2026.12.2', 'vllm/rocm+vulkan/multi/c1', 1, 0.172, 1.0, 1.0),
    ('2026.12.2', 'vllm/rocm+vulkan/multi/cN', 11, 0.341, 0.364, 0.727),
)
# fmt: on
