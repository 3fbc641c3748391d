"""The one error the estimator raises for inputs it cannot or will not estimate."""


class EstimateError(ValueError):
    """An input the estimator refuses, with the name of the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
