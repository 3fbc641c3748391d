"""Hardware described by numbers: a transient catalog entry that resolves like any other.

The selector and `servebook estimate --memory-gb-per-gpu ...` build one of these, so a
custom answer has the same shape, rules and figures as a catalog row.
"""

from dataclasses import dataclass
from typing import Any, Literal

from app.estimate.messages import Code, message
from app.models import Hardware

Platform = Literal["cuda", "rocm", "metal", "vulkan", "cpu"]
Interconnect = Literal["none", "pcie", "nvlink", "nvswitch", "xgmi"]
PLATFORMS: tuple[str, ...] = Platform.__args__  # type: ignore[attr-defined]
INTERCONNECTS: tuple[str, ...] = Interconnect.__args__  # type: ignore[attr-defined]
# Without a figure of its own, a runtime is given this share of each card: vLLM's default
# gpu_memory_utilization, the rule the catalog's own usable figures follow.
DEFAULT_USABLE_SHARE = 0.90
# Data-center cards and multi-card nodes take the profiles' server values.
SERVER_CARD_GB = 80
SERVER_CARD_COUNT = 4


@dataclass(frozen=True)
class HardwareDescription:
    memory_gb_per_gpu: float
    gpu_count: int = 1
    platform: str = "cuda"
    bandwidth_gb_s_per_gpu: float | None = None
    usable_memory_gb: float | None = None  # over all cards
    interconnect: str = "none"
    unified_memory: bool = False
    group: str | None = None  # local | server; guessed from the cards when not given
    bf16_tflops_per_gpu: float | None = None  # dense BF16 tensor throughput, when known
    bf16_basis: str = "published"  # derived or assumed where the GPU table says so
    card: str | None = None  # the card looked up by name ("A100 SXM 80 GB"), if one was
    # Other sizes the card's name could have meant, when the common one was assumed.
    other_sizes: tuple[str, ...] = ()
    # The catalog machine whose usable memory per card was taken, when a named card has one.
    usable_from: str | None = None


def guess_group(description: HardwareDescription) -> str:
    if description.unified_memory or description.platform in ("metal", "vulkan", "cpu"):
        return "local"
    server = (
        description.memory_gb_per_gpu >= SERVER_CARD_GB
        or description.gpu_count >= SERVER_CARD_COUNT
    )
    return "server" if server else "local"


def custom_hardware(description: HardwareDescription) -> Hardware:
    """A Hardware row that is never added to a session."""
    d = description
    total = d.memory_gb_per_gpu * d.gpu_count
    basis: dict[str, dict[str, Any]] = {"memory_gb": {"basis": "published", "note": "as given"}}
    usable = d.usable_memory_gb
    if usable is None:
        usable = round(total * DEFAULT_USABLE_SHARE, 2)
        share = f"{DEFAULT_USABLE_SHARE:.0%}"
        basis["usable_memory_gb"] = {
            "basis": "assumed",
            "note": f"{share} of the memory given",
            # The note as a code, so a page words it for its reader (catalog notes are the
            # sources' own English and have none).
            "note_message": message(Code.CUSTOM_USABLE_SHARE, share=share).as_json(),
        }
    if d.bf16_tflops_per_gpu is not None:
        basis["bf16_tflops_per_gpu"] = {"basis": d.bf16_basis, "note": "dense BF16, GPU table"}
    count = f"{d.gpu_count}x " if d.gpu_count > 1 else ""
    return Hardware(
        slug="custom",
        name=f"custom {count}{d.memory_gb_per_gpu:g} GB {d.platform}",
        group=d.group or guess_group(d),
        vendor="custom",
        platform=d.platform,
        unified_memory=d.unified_memory,
        device="custom",
        gpu_count=d.gpu_count,
        memory_gb_per_gpu=d.memory_gb_per_gpu,
        usable_memory_gb=usable,
        bandwidth_gb_s_per_gpu=d.bandwidth_gb_s_per_gpu,
        bf16_tflops_per_gpu=d.bf16_tflops_per_gpu,
        interconnect=d.interconnect,
        basis=basis,
        sources=[],
    )
