"""Why a request failed before or while it streamed, from the transport's exception: its
kind (connect, timeout, connection cut, protocol) and a reason in a few words."""

import socket

import httpx

from app.bench.result import ErrorKind, RequestError


def transport_failure(exc: httpx.HTTPError) -> RequestError:
    """The request's error for a transport exception."""
    kind = transport_error_kind(exc)
    message = connect_failure_reason(exc) if kind == "connect" else describe_error(exc)
    return RequestError(kind=kind, message=message)


def transport_error_kind(exc: httpx.HTTPError) -> ErrorKind:
    # A connect timeout is a connection that never opened, like a refusal: nothing answered.
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return "connect"
    if isinstance(exc, httpx.PoolTimeout | httpx.ReadTimeout | httpx.WriteTimeout):
        return "timeout"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return "connection_cut"
    return "protocol"


def connect_failure_reason(exc: httpx.HTTPError) -> str:
    """Why no connection opened, in a few words: "connection refused", "connect timed out".

    httpx reports a refusal as "All connection attempts failed"; the OS error that says what
    happened sits at the bottom of the exception chain.
    """
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect timed out"
    cause = innermost_os_error(exc)
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused"
    if isinstance(cause, socket.gaierror):
        return f"host name not resolved ({cause.strerror})"
    if cause is not None and cause.strerror:
        return cause.strerror
    return describe_error(exc)


def innermost_os_error(exc: BaseException) -> OSError | None:
    found = None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno is not None:
            found = current
        current = current.__cause__ or current.__context__
    return found


def describe_error(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"
