"""A catalog hardware entry from the GPU table, for a maintainer to review and add:
`python -m app.asking.gpu_catalog_entry "RTX 4090" --count 2` prints a
`seed_data/hardware.yaml` entry to paste (figures and source filled in; group, sort and
notes to review)."""

from __future__ import annotations

import argparse
import re

import yaml

from app.asking.custom import DEFAULT_USABLE_SHARE, guess_group
from app.asking.gpu_table import GpuEntry, UnknownGpu, describe, find_gpu


def catalog_entry(entry: GpuEntry, count: int = 1) -> dict[str, object]:
    """A `seed_data/hardware.yaml` entry for `count` of this card, to review and paste."""
    description = describe(entry, count)
    prefix = f"{count}x-" if count > 1 else ""
    slug = re.sub(r"[^a-z0-9]+", "-", f"{prefix}{entry.name}-{entry.memory_gb:g}gb".lower())
    usable = round(entry.memory_gb * count * DEFAULT_USABLE_SHARE, 1)
    bandwidth: object = entry.bandwidth_gb_s
    if entry.basis != "published":
        bandwidth = {"value": entry.bandwidth_gb_s, "basis": entry.basis, "note": entry.note}
    return {
        "slug": slug.strip("-"),
        "name": f"{count}x {entry.label}" if count > 1 else entry.label,
        "group": guess_group(description),
        "vendor": entry.vendor,
        "platform": entry.platform,
        "unified_memory": entry.unified,
        "device": entry.name,
        "gpu_count": count,
        "memory_gb_per_gpu": entry.memory_gb,
        "usable_memory_gb": {
            "value": usable,
            "basis": "derived",
            "note": f"{DEFAULT_USABLE_SHARE:g} x capacity",
        },
        "bandwidth_gb_s_per_gpu": bandwidth,
        "bf16_tflops_per_gpu": (
            entry.bf16_tflops
            if entry.bf16_basis == "published" or entry.bf16_tflops is None
            else {"value": entry.bf16_tflops, "basis": entry.bf16_basis, "note": entry.bf16_note}
        ),
        "interconnect": description.interconnect,
        "sources": [url for url in dict.fromkeys([entry.source_url, entry.bf16_source_url]) if url],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Print a catalog hardware entry from the GPU table"
    )
    parser.add_argument("name", help='card name, e.g. "RTX 4090" or "A100 80GB"')
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--memory-gb", type=float, default=None)
    args = parser.parse_args(argv)
    try:
        entry = find_gpu(args.name, args.memory_gb)
        if entry.unified and args.count > 1:
            raise ValueError(f"{entry.name} has unified memory; count must be 1")
    except UnknownGpu as error:
        parser.exit(2, f"{error}\nclose matches: {', '.join(error.close_matches) or 'none'}\n")
    except ValueError as error:
        parser.exit(2, f"{error}\n")
    print(yaml.safe_dump([catalog_entry(entry, args.count)], sort_keys=False), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
