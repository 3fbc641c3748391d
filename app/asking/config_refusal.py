"""A config.json the estimate cannot read, refused by its field in the reader's words: a
field its schema refuses (422), or fields that need others the config lacks, which the
schema states only in `x-together` (a conflict between them, 409)."""

from typing import Any

from app.estimate.inputs.hf_config_schema import MAX_CONFIG_NUMBER, config_fault
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.i18n.validation_words import refusal
from app.security.json_input import check_free_form

CONFIG_NUMBER_TOO_LARGE = register(
    "estimate.config_number_too_large",
    _l("%(key)s is %(value)s; config numbers are at most %(most)s"),
)
CONFIG_LACKS = register(
    "estimate.config_lacks", _l("the config has no %(names)s (one of these names)")
)
CONFIG_FIELD_REFUSED = register(
    "estimate.config_field_refused",
    _l("%(key)s is not what a config.json gives there: %(reason)s"),
)
# The same, where the config keeps its schema but not the rules of fields that go together
# (`x-together`): a conflict between its fields (app.errors.FIELD_CONFLICTS).
CONFIG_LACKS_TOGETHER = register(
    "estimate.config_lacks_together", _l("the config has no %(names)s (one of these names)")
)
CONFIG_FIELDS_CONFLICT = register(
    "estimate.config_fields_conflict",
    _l("%(key)s is not what a config.json gives there: %(reason)s"),
)


def refuse_unreadable_config(config: dict[str, Any], quant: str | None) -> None:
    """Refuses, by its field, a config the estimate cannot read (as its schema states)."""
    fault = config_fault(config, declared=quant is None)
    if fault is None:
        problem = check_free_form(config)  # the fields it does not name, as any free form
        if problem is not None:
            raise refusal(CONFIG_FIELD_REFUSED, key="hf_config", reason=problem)
        return
    if fault.missing:
        lacks = CONFIG_LACKS_TOGETHER if fault.together else CONFIG_LACKS
        raise refusal(lacks, names=" / ".join(fault.missing))
    if fault.too_large is not None:
        shown = f"{fault.too_large:.3g}"
        raise refusal(CONFIG_NUMBER_TOO_LARGE, key=fault.field, value=shown, most=MAX_CONFIG_NUMBER)
    refused = CONFIG_FIELDS_CONFLICT if fault.together else CONFIG_FIELD_REFUSED
    raise refusal(refused, key=fault.field or "hf_config", reason=fault.reason)
