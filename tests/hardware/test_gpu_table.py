"""Hardware by name: lenient matching, memory options, unknown names with suggestions."""

import subprocess
import sys

import pytest
import yaml

from app.asking.custom import HardwareDescription
from app.asking.gpu_table import (
    GPU_TABLE_PATH,
    AmbiguousGpu,
    UnknownGpu,
    all_gpus,
    find_gpu,
    lookup_gpu,
    normalize,
)
from app.config import PROJECT_ROOT


@pytest.mark.parametrize(
    "typed",
    ["RTX 4090", "NVIDIA GeForce RTX 4090", "4090", "geforce rtx-4090", "rtx4090", "RTX 4090 24GB"],
)
def test_the_4090_answers_to_every_usual_spelling(typed: str) -> None:
    assert lookup_gpu(typed) == HardwareDescription(
        memory_gb_per_gpu=24,
        platform="cuda",
        bandwidth_gb_s_per_gpu=1008,
        bf16_tflops_per_gpu=165.2,
        card="GeForce RTX 4090 24 GB",
    )


@pytest.mark.parametrize(
    ("typed", "name", "memory"),
    [
        ("NVIDIA A100-SXM4-80GB", "A100 SXM", 80),  # nvidia-smi's spelling
        ("NVIDIA H100 80GB HBM3", "H100 SXM", 80),
        ("A100 PCIe 40GB", "A100 PCIe", 40),
        ("Tesla T4", "Tesla T4", 16),
        ("7900 XTX", "Radeon RX 7900 XTX", 24),
        ("AMD Instinct MI300X", "Instinct MI300X", 192),
        ("B580", "Arc B580", 12),
        ("RTX 6000 Ada", "RTX 6000 Ada", 48),
        ("RTX A6000", "RTX A6000", 48),
        ("RTX PRO 6000 Blackwell Max-Q", "RTX PRO 6000 Blackwell Max-Q", 96),
        ("5060 Ti 16 GB", "GeForce RTX 5060 Ti", 16),
        ("Strix Halo 128GB", "Ryzen AI Max+ 395", 128),
        ("DGX Spark", "DGX Spark", 128),
        ("M3 Ultra 512GB", "Apple M3 Ultra", 512),
    ],
)
def test_lenient_names_reach_the_right_card(typed: str, name: str, memory: float) -> None:
    entry = find_gpu(typed)
    assert (entry.name, entry.memory_gb) == (name, memory)


def test_memory_option_changes_bandwidth_where_the_bus_differs() -> None:
    # The 36 GB M4 Max is the binned chip with the narrower bus.
    assert lookup_gpu("M4 Max", memory_gb=36).bandwidth_gb_s_per_gpu == 410
    assert lookup_gpu("M4 Max 128GB").bandwidth_gb_s_per_gpu == 546
    assert lookup_gpu("RTX 3060 12GB").bandwidth_gb_s_per_gpu == 360
    assert lookup_gpu("RTX 3060 8GB").bandwidth_gb_s_per_gpu == 240


@pytest.mark.parametrize(
    ("typed", "options"),
    [
        (
            "M4 Max",
            [
                "Apple M4 Max 36 GB",
                "Apple M4 Max 48 GB",
                "Apple M4 Max 64 GB",
                "Apple M4 Max 128 GB",
            ],
        ),
        ("RTX 4060 Ti", ["GeForce RTX 4060 Ti 8 GB", "GeForce RTX 4060 Ti 16 GB"]),
    ],
)
def test_a_name_with_several_memory_sizes_fails_listing_them(
    typed: str, options: list[str]
) -> None:
    with pytest.raises(AmbiguousGpu) as raised:
        lookup_gpu(typed)
    assert raised.value.close_matches == options
    assert options[0] in str(raised.value)


def test_a_memory_size_the_card_is_not_sold_with_is_refused_with_the_sizes() -> None:
    with pytest.raises(UnknownGpu, match="comes with 36, 48, 64, 128 GB, not 40 GB"):
        lookup_gpu("M4 Max", memory_gb=40)


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [("RTX 4099", "GeForce RTX 4090"), ("MI300", "Instinct MI300X"), ("H1000", "H100 SXM")],
)
def test_an_unknown_name_suggests_close_ones(typed: str, suggested: str) -> None:
    with pytest.raises(UnknownGpu) as raised:
        lookup_gpu(typed)
    assert not isinstance(raised.value, AmbiguousGpu)
    assert suggested in raised.value.close_matches


@pytest.mark.parametrize("typed", ["", "   ", "banana"])
def test_nonsense_is_unknown_without_a_crash(typed: str) -> None:
    with pytest.raises(UnknownGpu):
        lookup_gpu(typed)


def test_several_cards_take_the_table_link_and_unified_systems_refuse_a_count() -> None:
    assert lookup_gpu("H100", count=8).interconnect == "nvswitch"
    assert lookup_gpu("RTX 3090", count=2).interconnect == "pcie"
    assert lookup_gpu("RTX 3090").interconnect == "none"
    with pytest.raises(ValueError, match="count must be 1"):
        lookup_gpu("DGX Spark", count=2)
    with pytest.raises(ValueError, match="at least 1"):
        lookup_gpu("RTX 3090", count=0)


FAMILIES = [
    *[
        f"RTX {n}"
        for n in ("2060 12GB", "2080 Ti", "3050 8GB", "3090 Ti", "4060", "4090", "5050", "5090")
    ],
    "RTX A4000",
    "RTX 4000 Ada",
    "RTX PRO 4500 Blackwell",
    "T4",
    "L4",
    "L20",
    "L40S",
    "A10",
    "A10G",
    "A100 80GB",
    "A800",
    "H100",
    "H800",
    "H20",
    "H200",
    "B200",
    "GB200",
    "RX 6400",
    "RX 6950 XT",
    "RX 7600",
    "RX 9070 XT",
    "MI250",
    "MI300X",
    "MI325X",
    "MI355X",
    "Arc A770 16GB",
    "Arc B580",
    "Ryzen AI Max+ 395 64GB",
    "DGX Spark",
]
APPLE = [
    f"M{g}{tier}"
    for g in range(1, 6)
    for tier in ("", " Pro", " Max", " Ultra")
    if (g, tier) != (4, " Ultra")
]


@pytest.mark.parametrize("typed", FAMILIES)
def test_the_table_covers_each_family(typed: str) -> None:
    assert lookup_gpu(typed).bandwidth_gb_s_per_gpu > 0


@pytest.mark.parametrize("chip", APPLE)
def test_every_apple_chip_lists_its_memory_options(chip: str) -> None:
    sizes = sorted(
        e.memory_gb for e in all_gpus() if normalize(e.name) == normalize(f"Apple {chip}")
    )
    assert sizes, chip
    for size in sizes:
        assert lookup_gpu(chip, memory_gb=size).unified_memory


def test_every_row_carries_a_source_url() -> None:
    assert all(entry.source_url.startswith("https://") for entry in all_gpus())


def _rows() -> list[dict]:
    return yaml.safe_load(GPU_TABLE_PATH.read_text())["gpus"]


def _sizes(row: dict) -> list[float]:
    return row["memory_gb"] if isinstance(row["memory_gb"], list) else [row["memory_gb"]]


def _row(name: str, memory: float) -> dict:
    """The table row of this name sold with this memory."""
    (row,) = [row for row in _rows() if row["name"] == name and memory in _sizes(row)]
    return row


# (typed as people write it, the row it answers with, memory GB, bandwidth GB/s)
CARDS_PEOPLE_RUN = [
    ("H20", "H20", 96, 4000),
    ("NVIDIA H20", "H20", 96, 4000),
    ("h20", "H20", 96, 4000),
    ("H20 96GB", "H20", 96, 4000),
    ("L20", "L20", 48, 864),
    ("NVIDIA L20", "L20", 48, 864),
    ("A10G", "A10G", 24, 600),
    ("NVIDIA A10G", "A10G", 24, 600),
    ("a10g", "A10G", 24, 600),
    ("A10", "A10", 24, 600),
    ("L4", "L4", 24, 300),
    ("H800", "H800 SXM", 80, 3350),
    ("NVIDIA H800 SXM5", "H800 SXM", 80, 3350),
    ("H800 PCIe", "H800 PCIe", 80, 2000),
    ("A800", "A800 SXM", 80, 2039),
    ("NVIDIA A800-SXM4-80GB", "A800 SXM", 80, 2039),
    ("NVIDIA A800-PCIE-40GB", "A800 PCIe", 40, 1555),
    ("A800 PCIe 80GB", "A800 PCIe", 80, 1935),
    ("RTX 6000 Ada", "RTX 6000 Ada", 48, 960),
    ("RTX PRO 6000", "RTX PRO 6000 Blackwell", 96, 1792),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX PRO 6000 Blackwell", 96, 1792),
    ("RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell", 96, 1792),
    ("RTX-PRO-6000 Blackwell Max-Q", "RTX PRO 6000 Blackwell Max-Q", 96, 1792),
    (
        "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
        "RTX PRO 6000 Blackwell Max-Q",
        96,
        1792,
    ),
]


@pytest.mark.parametrize(("typed", "name", "memory", "bandwidth"), CARDS_PEOPLE_RUN)
def test_cards_people_run_answer_with_their_row(
    typed: str, name: str, memory: float, bandwidth: float
) -> None:
    row = _row(name, memory)
    entry = find_gpu(typed)
    assert (entry.name, entry.memory_gb, entry.bandwidth_gb_s) == (name, memory, bandwidth)
    assert entry.bandwidth_gb_s == row["bandwidth_gb_s"]
    assert entry.bf16_tflops == row.get("bf16_tflops")
    assert entry.link == row.get("link", "pcie")
    described = lookup_gpu(typed, count=8)
    assert (described.memory_gb_per_gpu, described.bandwidth_gb_s_per_gpu) == (memory, bandwidth)


def test_h20_and_h200_are_different_cards() -> None:
    h20, h200 = find_gpu("H20"), find_gpu("H200")
    assert (h20.name, h20.memory_gb, h20.bandwidth_gb_s) == ("H20", 96, 4000)
    assert (h200.name, h200.memory_gb, h200.bandwidth_gb_s) == ("H200", 141, 4800)
    assert find_gpu("NVIDIA H20").name == "H20" and find_gpu("NVIDIA H200").name == "H200"
    assert h20.bf16_tflops == 148 and h200.bf16_tflops == 989


def test_the_rtx_pro_6000_max_q_computes_less_on_the_same_memory() -> None:
    workstation, max_q = find_gpu("RTX PRO 6000"), find_gpu("RTX PRO 6000 Max-Q")
    assert (workstation.memory_gb, workstation.bandwidth_gb_s) == (96, 1792)
    assert (max_q.memory_gb, max_q.bandwidth_gb_s) == (96, 1792)
    assert workstation.bf16_tflops == 500 and max_q.bf16_tflops == 439


@pytest.mark.parametrize(
    ("typed", "link"),
    [
        ("H20", "nvswitch"),
        ("H800", "nvswitch"),
        ("A800", "nvswitch"),
        ("GB200", "nvswitch"),
        ("GB300", "nvswitch"),
        ("MI325X", "xgmi"),
        ("MI355X", "xgmi"),
        ("L4", "pcie"),
        ("L20", "pcie"),
        ("A10", "pcie"),
        ("RTX 6000 Ada", "pcie"),
        ("RTX PRO 6000", "pcie"),
        ("RTX PRO 6000 Max-Q", "pcie"),
    ],
)
def test_serving_cards_carry_dense_bf16_and_their_link(typed: str, link: str) -> None:
    entry = find_gpu(typed)
    assert entry.bf16_tflops and entry.bf16_tflops > 0
    assert entry.link == link


def test_a_figure_not_read_in_its_source_says_how_it_was_had() -> None:
    unpublished = [row for row in _rows() if row.get("basis", "published") != "published"]
    assert unpublished
    assert all(row.get("note") for row in unpublished)


def test_the_helper_prints_a_catalog_entry_the_seed_schema_accepts() -> None:
    from app.catalog.seed_schema.hardware import SeedHardware

    printed = subprocess.run(
        [sys.executable, "-m", "app.asking.gpu_catalog_entry", "RTX 3090", "--count", "2"],
        capture_output=True,
        text=True,
        check=True,
        cwd=PROJECT_ROOT,
    ).stdout
    [entry] = yaml.safe_load(printed)
    seeded = SeedHardware.model_validate({**entry, "sort": 900})
    assert (seeded.gpu_count, seeded.interconnect) == (2, "pcie")
    assert entry["bandwidth_gb_s_per_gpu"] == 936


def test_the_helper_names_close_matches_for_an_unknown_card() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app.asking.gpu_catalog_entry", "RTX 4099"],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
    )
    assert done.returncode == 2
    assert "GeForce RTX 4090" in done.stderr
