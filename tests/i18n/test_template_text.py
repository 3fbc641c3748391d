"""No template leaves visible English outside `{% trans %}` or `_()`."""

from pathlib import Path

import pytest

from app.config import PROJECT_ROOT
from tests.i18n.template_text import unmarked_text

TEMPLATES = PROJECT_ROOT / "templates"
ALL = sorted(p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*.html"))


@pytest.mark.parametrize("name", ALL)
def test_template_marks_all_its_text(name: str) -> None:
    assert unmarked_text((TEMPLATES / name).read_text()) == []


def test_the_scanner_sees_text_attributes_and_shown_literals() -> None:
    source = """<h1>Launch command</h1><p title="Copy it">{{ _("Marked") }}</p>
    {% trans n=3 %}Inside {{ n }} trans{% endtrans %}<b>{{ x }} tok/s</b>
    <td>{{ "MoE" if m else "dense" }}</td><td>{{ name or "unprofiled" }}</td>
    <code>--max-model-len</code><input placeholder="{{ _('typed') }}">"""
    assert unmarked_text(source) == ["Launch command", "Copy it", "MoE dense", "unprofiled"]


def test_templates_exist() -> None:
    assert "base.html" in ALL and Path(TEMPLATES / "error.html").exists()
