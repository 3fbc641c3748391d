"""The one error the estimator raises for inputs it cannot or will not estimate."""

from __future__ import annotations

from app.estimate.messages import Code, Message, message


class EstimateError(ValueError):
    """An input the estimator refuses, with the name of the input at fault.

    `message` is the English sentence for errors answered in English; `reason` says the same
    as a code and figures, for a verdict that words it in the reader's language. A refusal
    given without one reads as "the <field> input is refused".
    """

    def __init__(self, field: str, message: str, reason: Message | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.reason = reason

    def as_message(self) -> Message:
        if self.reason is not None:
            return self.reason
        return message(Code.INPUT_REFUSED, field=self.field)
