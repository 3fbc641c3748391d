"""What maintainers run when strings change: extract them from the code and templates into
messages.pot, carry new ones into each language's .po, and check the catalogs are whole."""

from dataclasses import dataclass
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po, write_po

from app.config import PROJECT_ROOT
from app.i18n.catalogs import DOMAIN, LOCALE_DIR, LOCALES, po_path

BABEL_CFG = PROJECT_ROOT / "babel.cfg"
POT_PATH = LOCALE_DIR / f"{DOMAIN}.pot"
# Labels defined at import time are marked with the lazy form.
KEYWORDS = {**DEFAULT_KEYWORDS, "_l": None, "lazy_gettext": None}
# English is the source language: its msgstr may stay empty (the msgid is shown).
TRANSLATED = tuple(locale for locale in LOCALES if locale != "en")


def new_catalog(locale: str | None) -> Catalog:
    return Catalog(
        locale=locale,
        domain=DOMAIN,
        project="servebook",
        version="0.1.0",
        copyright_holder="servebook",
        charset="utf-8",
        fuzzy=False,
    )


def visible_directory(path: str) -> bool:
    """Babel skips folders named _x by default; templates/_partials holds pages' text."""
    return not Path(path).name.startswith(".")


def extract(root: Path = PROJECT_ROOT) -> Catalog:
    """Every string marked for translation under app/ and templates/, as babel.cfg says."""
    with BABEL_CFG.open() as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    catalog = new_catalog(None)
    for filename, lineno, message, comments, context in extract_from_dir(
        root,
        method_map,
        options_map,
        keywords=KEYWORDS,
        comment_tags=("Translators:",),
        directory_filter=visible_directory,
    ):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return catalog


def read_catalog(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as po:
        return read_po(po, locale=locale, domain=DOMAIN)


def write_catalog(catalog: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as out:
        write_po(out, catalog, width=100, sort_output=False)
    tmp.replace(path)  # never a half-written catalog


def write_template() -> Catalog:
    template = extract()
    write_catalog(template, POT_PATH)
    return template


def update_catalogs() -> None:
    """Merge the template into each language, keeping existing translations."""
    template = read_catalog(POT_PATH)
    for locale in LOCALES:
        path = po_path(locale)
        catalog = read_catalog(path, locale) if path.exists() else new_catalog(locale)
        catalog.update(template, no_fuzzy_matching=True)
        catalog.obsolete.clear()
        write_catalog(catalog, path)


@dataclass(frozen=True)
class Problem:
    locale: str
    msgid: str
    what: str

    def __str__(self) -> str:
        return f"{self.locale}: {self.what}: {self.msgid!r}"


def message_key(message_id: str | tuple[str, ...]) -> str:
    return message_id if isinstance(message_id, str) else message_id[0]


def catalog_problems(template: Catalog, catalogs: dict[str, Catalog]) -> list[Problem]:
    """Strings the code marks that a catalog lacks, and strings a language leaves
    untranslated (empty, fuzzy or with other placeholders than the source)."""
    problems: list[Problem] = []
    wanted = {message_key(m.id) for m in template if m.id}
    for locale, catalog in catalogs.items():
        present = {message_key(m.id): m for m in catalog if m.id}
        problems += [Problem(locale, key, "missing") for key in sorted(wanted - set(present))]
        if locale not in TRANSLATED:
            continue
        for key in sorted(wanted & set(present)):
            message = present[key]
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            if message.fuzzy:
                problems.append(Problem(locale, key, "fuzzy"))
            elif not all(strings):
                problems.append(Problem(locale, key, "untranslated"))
            else:
                problems += [
                    Problem(locale, key, str(error)) for error in message.check(catalog) or ()
                ]
    return problems
