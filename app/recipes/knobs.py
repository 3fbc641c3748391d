"""The applied-values table: each knob's value, and whether the command really sets it."""

from dataclasses import dataclass

from app.estimate.messages import Message
from app.i18n.messages import english
from app.resolve import ResolvedRecipe
from app.resolve.applied import AppliedValues
from app.resolve.commands import KNOBS, Knob, KnobState
from app.resolve.runtime_defaults import documented_default

LABELS = {
    "tensor_parallel": "Tensor-parallel size",
    "context": "Starting context",
    "kv_cache_dtype": "KV cache dtype",
    "prefill_tokens": "Prefill batch (chunked prefill tokens)",
    "max_concurrency": "Maximum concurrent requests",
    "memory_fraction": "Memory fraction",
    "speculative_decoding": "Speculative decoding",
    "cuda_graphs": "CUDA graphs",
}


# Knobs that mean nothing on some platforms: a Mac has no CUDA graphs to turn off.
PLATFORM_KNOBS = {"cuda_graphs": ("cuda", "rocm")}


def knob_applies(name: str, platform: str) -> bool:
    return platform in PLATFORM_KNOBS.get(name, (platform,))


@dataclass(frozen=True)
class KnobRow:
    name: str
    label: str
    value: str
    state: str | None  # set | default | unsupported; None where no command is shown
    flag: str | None
    note: Message | None
    why: Message | None
    # Where a knob is left at the runtime's default: the version and source it was read from.
    default_version: str | None = None
    default_source: str | None = None

    def as_json(self) -> dict:
        why, note = self.why, self.note
        return {
            **self.__dict__,
            "note": english(note) if note else "",
            "note_message": note.as_json() if note else None,
            "why": english(why) if why else "",
            "why_message": why.as_json() if why else None,
        }


def value_text(values: AppliedValues, name: str) -> str:
    value = getattr(values, name)
    if name == "context":
        return f"{value:,} tokens"
    if name == "prefill_tokens":
        return f"{value:,}"
    if name == "memory_fraction":
        return f"{value:.2f}" if value is not None else "runtime margin (fixed)"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def knob_rows(recipe: ResolvedRecipe) -> list[KnobRow]:
    """One row per knob, read against the primary command when one is shown."""
    values = recipe.applied
    if values is None:
        return []
    command = recipe.primary_command
    rows = []
    for name in KNOBS:
        if not knob_applies(name, recipe.hardware.platform):
            continue
        knob: Knob | None = command.knobs.get(name) if command else None
        documented = None
        if command is not None and knob is not None and knob.state == KnobState.DEFAULT:
            documented = documented_default(command.runtime, name)
        rows.append(
            KnobRow(
                name=name,
                label=LABELS[name],
                value=value_text(values, name),
                state=knob.state.value if knob else None,
                flag=knob.flag if knob else None,
                note=knob.note if knob else None,
                why=values.why.get(name),
                default_version=documented.version if documented else None,
                default_source=str(documented.source) if documented else None,
            )
        )
    return rows


__all__ = ["KnobRow", "KnobState", "knob_applies", "knob_rows"]
