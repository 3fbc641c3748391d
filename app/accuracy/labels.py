"""A range class in words: "SGLang, several NVIDIA GPUs, concurrent requests"."""

from __future__ import annotations

import re

from app.i18n.catalogs import lazy_gettext as _l

RUNTIMES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "llama.cpp": "llama.cpp",
    "mlx": "MLX",
    "servers": _l("vLLM and SGLang"),  # their shared pool at one request
}
PLATFORMS = {
    "cuda": _l("NVIDIA datacenter and desktop GPUs"),
    "cuda-unified": _l("NVIDIA unified memory (DGX Spark)"),
    "rocm+vulkan": _l("AMD and Intel GPUs (ROCm, Vulkan)"),
    "metal": _l("Apple M-series"),
    "cpu": _l("CPU"),
}
# Platforms whose machines have one memory pool: the GPU count says nothing there.
ONE_POOL = frozenset({"cuda-unified", "metal", "cpu"})
GPUS = {"single": _l("one GPU"), "multi": _l("several GPUs")}
LOADS = {"c1": _l("one request at a time"), "cN": _l("concurrent requests")}
EVERY_CLASS = _l("all hardware and loads")
EVERY_HARDWARE = _l("all hardware")  # a family's pool at one load ("vllm/*/*/c1")


def class_label(key: str) -> str:
    """The class named in the reader's language (the runtime keeps its own name)."""
    family, platform, gpus, load = (key.split("/") + ["*"] * 4)[:4]
    runtime = str(RUNTIMES.get(family, family))
    if platform == "*" and gpus in GPUS and load in LOADS:  # both servers on as many GPUs
        return f"{runtime}, {GPUS[gpus]}, {LOADS[load]}"
    if platform == "*" and load in LOADS:
        return f"{runtime}, {EVERY_HARDWARE}, {LOADS[load]}"
    if platform == "*":
        return f"{runtime}, {EVERY_CLASS}"
    parts = [runtime, str(PLATFORMS.get(platform, platform))]
    if platform not in ONE_POOL:
        parts.append(str(GPUS.get(gpus, gpus)))
    parts.append(str(LOADS.get(load, load)))
    return ", ".join(parts)


def class_anchor(key: str) -> str:
    """The id of the class's row on the accuracy page: "class-sglang-cuda-multi-cN",
    "class-llama-cpp-all-all-all" (letters, digits and dashes: a CSS selector as it is)."""
    return "class-" + re.sub(r"[^A-Za-z0-9]+", "-", key.replace("*", "all"))
