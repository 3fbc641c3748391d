"""Hardware by name: look a card up in the sourced table `seed_data/gpus.yaml`.

`lookup_gpu("RTX 4090", count=2)` gives the same `HardwareDescription` the selector builds
from numbers, so a card named by the user resolves like custom hardware. Names match
leniently: case, spaces, dashes, vendor words ("NVIDIA", "GeForce", "AMD", "Radeon", ...)
and the family prefix ("RTX", "RX", "Arc", "Instinct") do not matter, and a memory size in
the name ("A100 80GB", "RTX 4060 Ti 16 GB") picks that memory option.
A maintainer adds a catalog entry from the table with `app/asking/gpu_catalog_entry.py`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.asking.custom import HardwareDescription
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register
from app.models import Hardware
from app.resources import SEED_DIR

GPU_TABLE_PATH = SEED_DIR / "gpus.yaml"

# Words that name a vendor, a product line or a memory type, not a card.
_NOISE_WORDS = ("nvidia", "geforce", "tesla", "amd", "radeon", "intel", "apple", "hbm3e", "hbm3")
# Family prefixes people often leave out ("4090", "7900 XTX", "B580", "MI300X").
_FAMILY_PREFIXES = ("rtx", "rx", "arc", "instinct")
_MEMORY_IN_NAME = re.compile(r"(?<![a-z0-9])(\d+(?:\.\d+)?)\s*(?:gb|gib|g)(?![a-z0-9])")
_SXM_GENERATION = re.compile(r"sxm\d")
MAX_SUGGESTIONS = 6


NO_GPU_NAME = register("gpu.no_name", _l("no GPU name given"))
UNKNOWN_GPU = register("gpu.unknown", _l("unknown GPU '%(name)s'"))
GPU_SIZES = register("gpu.sizes", _l("'%(name)s' comes with %(sizes)s GB, not %(memory)s GB"))
GPU_AMBIGUOUS = register(
    "gpu.ambiguous",
    _l(
        "'%(name)s' matches several cards or memory sizes: %(options)s; name one, or give "
        "the memory (e.g. '%(example)s')"
    ),
)
GPU_COUNT_BELOW_ONE = register(
    "gpu.count_below_one", _l("GPU count must be at least 1, not %(count)s")
)
GPU_UNIFIED_COUNT = register(
    "gpu.unified_count", _l("%(name)s is a single system with unified memory; count must be 1")
)


class GpuRefused(ValueError):
    """A card name or count refused: `said` words it for the reader, str() in English."""

    def __init__(self, said: Sentence, close_matches: list[str] | None = None) -> None:
        super().__init__(english(said))
        self.said = said
        self.close_matches = close_matches or []


class UnknownGpu(GpuRefused):
    """No card, or no single card, matches the name; `close_matches` lists candidates."""


class AmbiguousGpu(UnknownGpu):
    """The name matches a card sold with several memory sizes, and none was given."""


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    memory_gb: float | list[float]
    bandwidth_gb_s: float = Field(gt=0)
    vendor: Literal["nvidia", "amd", "intel", "apple"]
    platform: Literal["cuda", "rocm", "metal", "vulkan"]
    source: str
    unified: bool = False
    link: Literal["pcie", "nvlink", "nvswitch", "xgmi"] = "pcie"
    aliases: list[str] = []
    basis: Literal["published", "derived", "assumed"] = "published"
    note: str | None = None
    bf16_tflops: float | None = Field(default=None, gt=0)
    bf16_source: str | None = None  # the row's source when None
    # How the BF16 figure was reached, where it was not read in its source (Apple's GPUs:
    # worked out from core counts and clocks), and how.
    bf16_basis: Literal["published", "derived", "assumed"] = "published"
    bf16_note: str | None = None
    common: bool = False  # answers a name that matches several entries

    @property
    def memory_options(self) -> list[float]:
        return self.memory_gb if isinstance(self.memory_gb, list) else [self.memory_gb]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1]
    sources: dict[str, str]
    gpus: list[_Row]

    @model_validator(mode="after")
    def _sources_exist(self) -> _Table:
        named = {row.source for row in self.gpus} | {
            row.bf16_source for row in self.gpus if row.bf16_source
        }
        missing = sorted(named - set(self.sources))
        if missing:
            raise ValueError(f"gpus name unknown source ids: {', '.join(missing)}")
        return self


@dataclass(frozen=True)
class GpuEntry:
    """One card at one memory size, as the table gives it."""

    name: str
    memory_gb: float
    bandwidth_gb_s: float
    vendor: str
    platform: str
    unified: bool
    link: str
    source_url: str
    basis: str
    note: str | None
    bf16_tflops: float | None = None
    bf16_source_url: str | None = None
    common: bool = False
    bf16_basis: str = "published"
    bf16_note: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name} {self.memory_gb:g} GB"


@dataclass(frozen=True)
class GpuMatch:
    """The entry a name points to; `others` lists the sizes it could also have meant when
    the name matched several and the common one was taken (empty when nothing was assumed)."""

    entry: GpuEntry
    others: tuple[GpuEntry, ...] = ()


def normalize(name: str) -> str:
    """The comparison key of a card name: lower case, no vendor words, no separators."""
    key = name.lower()
    for word in _NOISE_WORDS:
        key = re.sub(rf"(?<![a-z0-9]){word}(?![a-z0-9])", " ", key)
    key = _SXM_GENERATION.sub("sxm", key)
    return re.sub(r"[^a-z0-9+]", "", key)


def _keys(name: str) -> set[str]:
    """A name's key, and the key without its family prefix."""
    key = normalize(name)
    keys = {key}
    for prefix in _FAMILY_PREFIXES:
        if key.startswith(prefix) and len(key) > len(prefix):
            keys.add(key[len(prefix) :])
    return keys


@cache
def _index(path: Path = GPU_TABLE_PATH) -> dict[str, list[GpuEntry]]:
    """Every key a card answers to, mapped to its entries (one per memory option)."""
    table = _Table.model_validate(yaml.safe_load(path.read_text()))
    index: dict[str, list[GpuEntry]] = {}
    for row in table.gpus:
        for memory in row.memory_options:
            entry = GpuEntry(
                name=row.name,
                memory_gb=memory,
                bandwidth_gb_s=row.bandwidth_gb_s,
                vendor=row.vendor,
                platform=row.platform,
                unified=row.unified,
                link=row.link,
                source_url=table.sources[row.source],
                basis=row.basis,
                note=row.note,
                bf16_tflops=row.bf16_tflops,
                bf16_source_url=table.sources[row.bf16_source or row.source],
                common=row.common,
                bf16_basis=row.bf16_basis,
                bf16_note=row.bf16_note,
            )
            for alias in [row.name, *row.aliases]:
                for key in _keys(alias):
                    index.setdefault(key, []).append(entry)
    return index


@dataclass(frozen=True)
class StatedName:
    """A card name as the table writes it, with what a request naming it may add: the
    memory sizes the card comes in, its platform, and whether it is one unified system."""

    sizes: tuple[float, ...]
    platform: str
    unified: bool


@cache
def stated_gpu_names(path: Path = GPU_TABLE_PATH) -> dict[str, StatedName]:
    """Every name and alias of the table that names a card by itself (one entry, or the
    common one of its sizes): what the API's schema lists for a GPU name. Other spellings
    are read too ("rtx4090", "A100 80GB"); these are the ones it states."""
    table = _Table.model_validate(yaml.safe_load(path.read_text()))
    stated: dict[str, StatedName] = {}
    for row in table.gpus:
        for name in [row.name, *row.aliases]:
            try:
                entry = match_gpu(name).entry
            except ValueError:  # a name several cards share, with none the common one
                continue
            base, _ = _split_memory(name)
            sizes = tuple(sorted({e.memory_gb for e in _index().get(normalize(base), [])}))
            stated[name] = StatedName(sizes, entry.platform, entry.unified)
    return stated


def all_gpus() -> list[GpuEntry]:
    """Every entry of the table once, in table order."""
    seen: dict[tuple[str, float], GpuEntry] = {}
    for entries in _index().values():
        for entry in entries:
            seen.setdefault((entry.name, entry.memory_gb), entry)
    return list(seen.values())


def _split_memory(name: str) -> tuple[str, float | None]:
    """A memory size written in the name ("A100 80GB") taken out of it."""
    found = _MEMORY_IN_NAME.search(name.lower())
    if not found:
        return name, None
    rest = name.lower()[: found.start()] + " " + name.lower()[found.end() :]
    return rest, float(found.group(1))


def find_gpu(name: str, memory_gb: float | None = None) -> GpuEntry:
    """The one table entry a name (and memory size) points to; see `match_gpu`."""
    return match_gpu(name, memory_gb).entry


def match_gpu(name: str, memory_gb: float | None = None) -> GpuMatch:
    """The table entry a name (and memory size) points to.

    A name that matches several entries with no memory given answers with the one the
    table marks `common` (A100 -> the 80 GB SXM card), listing the others. Raises
    UnknownGpu (with close matches) when nothing matches, AmbiguousGpu (with the memory
    options) when several match and none is the common one.
    """
    if not name or not name.strip():
        raise UnknownGpu(NO_GPU_NAME())
    base, memory_in_name = _split_memory(name)
    memory = memory_gb if memory_gb is not None else memory_in_name
    index = _index()
    entries = _unique(index.get(normalize(base), []))
    if not entries:
        raise UnknownGpu(UNKNOWN_GPU(name=name), _suggest(base))
    if memory is not None:
        sized = [entry for entry in entries if entry.memory_gb == memory]
        if not sized:
            options = [entry.label for entry in entries]
            sizes = [entry.memory_gb for entry in entries]
            raise UnknownGpu(GPU_SIZES(name=name, sizes=sizes, memory=memory), options)
        entries = sized
    if len(entries) > 1:
        common = [entry for entry in entries if entry.common]
        if memory is None and len(common) == 1:
            others = tuple(entry for entry in entries if entry is not common[0])
            return GpuMatch(common[0], others)
        options = [entry.label for entry in entries]
        raise AmbiguousGpu(GPU_AMBIGUOUS(name=name, options=options, example=options[0]), options)
    return GpuMatch(entries[0])


def lookup_gpu(
    name: str,
    count: int = 1,
    memory_gb: float | None = None,
    catalog: Iterable[Hardware] = (),
) -> HardwareDescription:
    """Hardware made of `count` of the named card, for the estimator. Where the catalog
    (`catalog`, its hardware rows) holds a machine of this card, the card's usable memory is
    the catalog's own figure, so a card named here is answered as its catalog row is."""
    if count < 1:
        raise GpuRefused(GPU_COUNT_BELOW_ONE(count=count))
    match = match_gpu(name, memory_gb)
    entry = match.entry
    if entry.unified and count > 1:
        raise GpuRefused(GPU_UNIFIED_COUNT(name=entry.name))
    described = describe(entry, count, match.others)
    stated = catalog_usable_per_card(entry, count, catalog)
    if stated is None:
        return described
    per_card, row = stated
    return replace(described, usable_memory_gb=round(per_card * count, 2), usable_from=row.name)


def catalog_usable_per_card(
    entry: GpuEntry, count: int, catalog: Iterable[Hardware]
) -> tuple[float, Hardware] | None:
    """The usable memory per card the catalog states for this card, and the row stating it
    (one of as many cards first); None where the catalog holds no machine of this card."""
    rows = sorted(catalog, key=lambda row: (row.gpu_count != count, row.gpu_count, row.slug))
    for row in rows:
        try:
            found = match_gpu(row.device, row.memory_gb_per_gpu).entry
        except UnknownGpu:
            continue
        if (found.name, found.memory_gb) == (entry.name, entry.memory_gb):
            return row.usable_gb_per_gpu, row
    return None


def describe(
    entry: GpuEntry, count: int = 1, others: tuple[GpuEntry, ...] = ()
) -> HardwareDescription:
    """The hardware description of `count` cards of one table entry; `others` are the sizes
    the name could also have meant, when the common one was assumed."""
    return HardwareDescription(
        memory_gb_per_gpu=entry.memory_gb,
        gpu_count=count,
        platform=entry.platform,
        bandwidth_gb_s_per_gpu=entry.bandwidth_gb_s,
        interconnect=entry.link if count > 1 else "none",
        unified_memory=entry.unified,
        bf16_tflops_per_gpu=entry.bf16_tflops,
        bf16_basis=entry.bf16_basis,
        card=entry.label,
        other_sizes=tuple(other.label for other in others),
    )


def _unique(entries: list[GpuEntry]) -> list[GpuEntry]:
    """Entries without repeats (a name and an alias can reach one entry twice)."""
    return list(dict.fromkeys(entries))


def _suggest(name: str) -> list[str]:
    """Names of cards whose key is close to the one given."""
    index = _index()
    keys = difflib.get_close_matches(normalize(name), list(index), n=MAX_SUGGESTIONS, cutoff=0.6)
    names: list[str] = []
    for key in keys:
        for entry in index[key]:
            if entry.name not in names:
                names.append(entry.name)
    return names[:MAX_SUGGESTIONS]
