"""What was changed between two runs, one setting at a time, so a change in the figures
can be put down to a single setting, or said to be unattributable.

A setting is one thing a person chose: the runtime version, a command flag, an applied
value, an environment entry. An applied value and the command flags that set it (context
and `--max-model-len` on vLLM) are one setting, not two.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register
from app.models import Record
from app.records.comparison.command_diff import KNOB_FLAGS, FlagChange, diff_commands, parse_command
from app.records.comparison.command_diff import show_value as show_flag

SETUP: tuple[tuple[str, Callable[[Record], Any]], ...] = (
    ("model", lambda r: r.model.slug),
    ("model file", lambda r: r.artifact.slug),
    ("runtime", lambda r: r.runtime.slug),
    ("runtime version", lambda r: r.runtime_version),
    ("hardware", lambda r: r.hardware.slug),
    ("GPUs", lambda r: r.gpu_count),
    ("profile", lambda r: r.profile.slug if r.profile else None),
)


# The setup's settings and the kinds of setting, as a page names them.
SETUP_WORDS = {
    "model": register("compare.setup.model", _l("model")),
    "model file": register("compare.setup.model_file", _l("model file")),
    "runtime": register("compare.setup.runtime", _l("runtime")),
    "runtime version": register("compare.setup.runtime_version", _l("runtime version")),
    "hardware": register("compare.setup.hardware", _l("hardware")),
    "GPUs": register("compare.setup.gpus", _l("GPUs")),
    "profile": register("compare.setup.profile", _l("profile")),
}
KIND_WORDS = {
    "setup": register("compare.kind.setup", _l("setup")),
    "command": register("compare.kind.command", _l("command")),
    "applied value": register("compare.kind.applied_value", _l("applied value")),
    "environment": register("compare.kind.environment", _l("environment")),
}
NOTHING_CHANGED = register(
    "compare.nothing_changed",
    _l("No setting changed: any difference in the figures is run-to-run noise"),
)
ONE_CHANGED = register("compare.one_changed", _l("1 setting changed: %(setting)s"))
SEVERAL_CHANGED = register(
    "compare.several_changed", _l("%(num)s settings changed: the effect cannot be attributed")
)


@dataclass(frozen=True)
class SettingChange:
    kind: str  # setup | command | applied value | environment
    name: str
    a: Any
    b: Any
    flags: tuple[str, ...] = ()  # the command flags that carry this applied value

    @property
    def label(self) -> str:
        """The flag when there is one, since that is what a person edits."""
        if self.flags:
            return f"{' '.join(self.flags)} ({self.name})"
        return self.name

    @property
    def named(self) -> Sentence | str:
        """A setup setting by its name in the reader's words; a flag, value or variable as
        it is spelled."""
        if self.kind == "setup" and self.name in SETUP_WORDS:
            return SETUP_WORDS[self.name]()
        return self.label

    @property
    def kind_named(self) -> Sentence:
        return KIND_WORDS[self.kind]()

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "label": self.label,
            "a": self.a,
            "b": self.b,
            "flags": list(self.flags),
        }


def attribution_said(changes: list[SettingChange]) -> Sentence:
    """The one line that says whether an effect can be put down to a setting."""
    if not changes:
        return NOTHING_CHANGED()
    if len(changes) == 1:
        return ONE_CHANGED(setting=changes[0].named)
    return SEVERAL_CHANGED(num=len(changes))


def attribution(changes: list[SettingChange]) -> str:
    """The line in English, as JSON gives it."""
    return english(attribution_said(changes))


def setup_changes(a: Record, b: Record) -> list[SettingChange]:
    return [SettingChange("setup", name, get(a), get(b)) for name, get in SETUP if get(a) != get(b)]


def mapping_changes(kind: str, a: dict[str, Any], b: dict[str, Any]) -> list[SettingChange]:
    keys = [*a, *(key for key in b if key not in a)]
    return [
        SettingChange(kind, key, a.get(key), b.get(key)) for key in keys if a.get(key) != b.get(key)
    ]


def command_changes(a: Record, b: Record) -> list[FlagChange]:
    return diff_commands(
        parse_command(a.command, a.runtime.slug), parse_command(b.command, b.runtime.slug)
    )


def fold_flags(
    knobs: list[SettingChange], flags: list[FlagChange], runtime: str | None
) -> list[SettingChange]:
    """Each changed applied value takes the changed flags that set it on this runtime; the
    flags no applied value explains stay settings of their own."""
    carriers = KNOB_FLAGS.get(runtime or "", {})
    taken: set[str] = set()
    folded = []
    for knob in knobs:
        mine = [f for f in flags if f.key in carriers.get(knob.name, ()) and f.key not in taken]
        taken.update(f.key for f in mine)
        folded.append(
            SettingChange(knob.kind, knob.name, knob.a, knob.b, tuple(f.name for f in mine))
        )
    rest = [
        SettingChange("command", f.name, show_flag(f.a), show_flag(f.b))
        for f in flags
        if f.key not in taken
    ]
    return folded + rest


def setting_changes(a: Record, b: Record) -> list[SettingChange]:
    """Every setting that differs from a to b, each counted once."""
    same_runtime = a.runtime.slug if a.runtime.slug == b.runtime.slug else None
    knobs = mapping_changes("applied value", a.applied_values, b.applied_values)
    return [
        *setup_changes(a, b),
        *fold_flags(knobs, command_changes(a, b), same_runtime),
        *mapping_changes("environment", a.environment, b.environment),
    ]
