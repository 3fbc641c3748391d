"""The README's and docs' command synopses agree with the CLI's own options.

Every `servebook ...` written in README.md or docs/*.md names a command that exists and only
flags that command takes. A synopsis in a table row (the README's command table, the docs'
ways to submit) is the command's whole usage: it names each option the CLI marks required,
unbracketed, and each option whose help says it is required unless something else gives it.
"""

import re
from pathlib import Path

import click
import pytest

from app.cli import main
from app.config import PROJECT_ROOT

DOCS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
SYNOPSIS = re.compile(r"`(servebook(?: [^`]*)?)`")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
BRACKETED = re.compile(r"\[[^\[\]]*\]")


def synopses() -> list[tuple[str, str, bool]]:
    """(where, synopsis, in a table row) for every synopsis in the docs."""
    found = []
    for path in DOCS:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for match in SYNOPSIS.finditer(line):
                text = match.group(1).replace("\\|", "|")
                row = line.startswith("|") and line.index(match.group(0)) < line.index("|", 1)
                found.append((f"{Path(path).name}:{number}", text, row))
    return found


def command_of(text: str) -> tuple[click.Command, list[str]]:
    """The (sub)command a synopsis runs, and the words that named it."""
    command: click.Command = main
    names = []
    for word in text.split()[1:]:
        if not isinstance(command, click.Group) or word not in command.commands:
            break
        command = command.commands[word]
        names.append(word)
    return command, names


def flags_of(command: click.Command) -> set[str]:
    return {name for param in command.params for name in getattr(param, "opts", [])} | {"--help"}


def required_flags(command: click.Command) -> tuple[set[str], set[str]]:
    """The options marked required, and those whose help says they are required unless
    something else gives them (the file, for `import`'s runtime version)."""
    options = [p for p in command.params if isinstance(p, click.Option)]
    marked = {max(p.opts, key=len) for p in options if p.required}
    unless = {max(p.opts, key=len) for p in options if "Required unless" in (p.help or "")}
    return marked, unless


@pytest.mark.parametrize(("where", "text", "row"), synopses(), ids=lambda v: str(v)[:60])
def test_a_synopsis_names_only_what_its_command_takes(where: str, text: str, row: bool) -> None:
    command, names = command_of(text)
    extra = {"--version"} if not names else set()
    unknown = set(FLAG.findall(text)) - flags_of(command) - extra
    assert not unknown, f"{where}: `{text}` names {sorted(unknown)}, not options of {names}"
    if not row or "..." in text.split()[1:2]:
        return
    marked, unless = required_flags(command)
    bare = BRACKETED.sub(" ", text)
    missing = {flag for flag in marked if flag not in FLAG.findall(bare)}
    assert not missing, f"{where}: `{text}` leaves out required {sorted(missing)}"
    absent = {flag for flag in unless if flag not in FLAG.findall(text)}
    assert not absent, f"{where}: `{text}` leaves out {sorted(absent)}, required unless given"


def test_the_checker_sees_a_synopsis_that_leaves_out_a_required_option() -> None:
    command, names = command_of("servebook import FILE --model M")
    assert names == ["import"]
    marked, unless = required_flags(command)
    assert {"--model", "--hardware", "--artifact", "--runtime"} <= marked
    assert unless == {"--runtime-version"}
    assert len([s for s in synopses() if s[2]]) >= 15  # the command table was read
