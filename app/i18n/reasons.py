"""The reader's words for the verdict reasons the estimator and the resolution write.

Reasons are English sentences in the resolved recipe, and JSON carries them as they are.
Pages show them through this table: each known clause is matched, its figures kept, and
worded again through gettext; a clause it does not know is shown as written, never
dropped. (Reasons built from codes and figures would need no matching: a later step.)
"""

import re
from collections.abc import Callable
from typing import Any

from app.i18n.catalogs import gettext as _
from app.i18n.catalogs import lazy_gettext as _l

N = r"[\d,.]+"
UNVERIFIED: dict[str, Any] = {
    "runtime pairing": _l("runtime pairing needs verification"),
    "compressed runtime": _l("compressed runtime needs verification"),
}

CLAUSES: list[tuple[re.Pattern[str], Callable[[dict[str, str]], str]]] = [
    (re.compile(rf"fits up to (?P<largest>{N}) tokens, not the (?P<asked>{N}) (asked|requested)"),
     lambda g: _("fits up to %(largest)s tokens, not the %(asked)s asked", **g)),
    (re.compile(rf"fits (?P<tokens>{N}) tokens x (?P<requests>\d+) requests"),
     lambda g: _("fits %(tokens)s tokens x %(requests)s requests", **g)),
    (re.compile(rf"fits (?P<tokens>{N}) tokens"),
     lambda g: _("fits %(tokens)s tokens", **g)),
    (re.compile(rf"fits up to (?P<tokens>{N}) tokens"),
     lambda g: _("fits up to %(tokens)s tokens", **g)),
    (re.compile(r"(?P<what>runtime pairing|compressed runtime) needs verification"),
     lambda g: str(UNVERIFIED[g["what"]])),
    (re.compile(rf"needs (?P<needed>{N}) GB per GPU, (?P<usable>{N}) GB usable"),
     lambda g: _("needs %(needed)s GB per GPU, %(usable)s GB usable", **g)),
    (re.compile(rf"fits only (?P<tokens>{N}) tokens, below the (?P<least>{N}) minimum"),
     lambda g: _("fits only %(tokens)s tokens, below the %(least)s minimum", **g)),
    (re.compile(r"no runtime in the catalog runs (?P<formats>.+) on (?P<platform>\S+)"),
     lambda g: _("no runtime in the catalog runs %(formats)s on %(platform)s", **g)),
]


def clause_text(clause: str) -> str:
    for pattern, words in CLAUSES:
        found = pattern.fullmatch(clause)
        if found:
            groups = {k: v for k, v in found.groupdict().items() if v is not None}
            return words(groups)
    return clause


def reason_text(reason: str | None) -> str:
    """A reason in the reader's language, clause by clause ("; " between clauses)."""
    if not reason:
        return ""
    return _("; ").join(clause_text(clause) for clause in str(reason).split("; "))
