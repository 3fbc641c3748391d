"""Domain errors carry their HTTP status; one handler renders them as a page or JSON."""


class ServebookError(Exception):
    status_code = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(ServebookError):
    status_code = 404


class Forbidden(ServebookError):
    status_code = 403


class Conflict(ServebookError):
    status_code = 409
