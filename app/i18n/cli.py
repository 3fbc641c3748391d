"""`servebook i18n extract|update|check`: the maintainer's round trip for the catalogs.

The .po files are compiled in memory when the app starts, so there is no compile step.
"""

import click

from app.i18n.catalogs import LOCALES, po_path
from app.i18n.maintenance import (
    POT_PATH,
    catalog_problems,
    read_catalog,
    update_catalogs,
    write_template,
)
from app.i18n.maintenance import (
    extract as extract_strings,
)
from app.resources import FROM_CHECKOUT


@click.group()
def i18n() -> None:
    """Translation catalogs (app/locales)."""
    if not FROM_CHECKOUT:
        # They read the sources (babel.cfg, templates/) and write the catalogs: a checkout's
        # files, not those of an installed package.
        raise click.ClickException(
            "the i18n commands work on a source checkout: run them from a clone of servebook"
        )


@i18n.command()
def extract() -> None:
    """Collect every marked string into app/locales/messages.pot."""
    template = write_template()
    click.echo(f"{len(template)} strings -> {POT_PATH}")


@i18n.command()
def update() -> None:
    """Carry new strings from messages.pot into each language's messages.po."""
    update_catalogs()
    for locale in LOCALES:
        click.echo(f"updated {po_path(locale)}")


@i18n.command()
def check() -> None:
    """Fail when a marked string is missing from a catalog or left untranslated."""
    template = extract_strings()
    catalogs = {locale: read_catalog(po_path(locale), locale) for locale in LOCALES}
    problems = catalog_problems(template, catalogs)
    for problem in problems:
        click.echo(str(problem), err=True)
    if problems:
        raise click.ClickException(f"{len(problems)} catalog problems")
    click.echo("catalogs complete")
