"""Strict JSON for everything a request or an uploaded file brings in.

Python's `json` accepts `NaN`, `Infinity` and `-Infinity`, turns `1e400` into infinity,
converts integers of any length (raising a bare ValueError past 4,300 digits) and recurses
once per nesting level, so a body nested 100,000 deep ends in RecursionError. Nothing here
can store or export those values (JSON has no NaN; SQLite integers are 64-bit), so they are
refused while parsing, with a message that says what was wrong, and the nesting is
measured before the parser recurses at all (in linear time: `json_scan`). An object that
names a key twice is refused rather than keeping the last value, and text that is not valid
Unicode (a lone surrogate from a `\\udc80` escape) is refused naming the field that holds it.

Free-form objects inside a valid document (applied values, environment extras,
measurement details, samples) get their own, tighter bounds: `check_free_form` walks them
without recursion. What the OpenAPI document says of these values is
`app.security.json_input_schema`.
"""

import gc
import json
import math
import re
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register
from app.i18n.validation_words import refusal
from app.security.json_scan import (
    has_lone_surrogate,
    lone_surrogate_at,
    may_hold_surrogate,
    nesting_depth,
)

# SQLite stores integers as signed 64-bit; JSON numbers beyond that cannot round-trip.
INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
MAX_INT_DIGITS = len(str(INT_MAX))
# Deep enough for any document this app reads (result files nest about 6 levels).
MAX_DOCUMENT_DEPTH = 64
# Free-form objects are small maps of settings and statistics.
MAX_FREE_FORM_DEPTH = 8
MAX_FREE_FORM_NODES = 10_000
MAX_FREE_FORM_TEXT = 20_000
# Keys in one object: a safetensors index's map of tensors (the largest object a body
# carries) within the 5 MB upload limit holds about 60,000.
MAX_OBJECT_KEYS = 100_000
# Keys in one body: a safetensors header (four keys a tensor) within 5 MB holds under
# 200,000. Counted before parsing as the `":` that end them (text could only add some), so
# a body of 400,000 unknown keys is refused in milliseconds, building nothing.
MAX_BODY_KEYS = 250_000
# Bodies larger than this are parsed on a worker thread, so the event loop keeps answering.
PARSE_OFF_LOOP_BYTES = 64 * 1024

# U+0000 as a JSON escape: \u0000 after an even number of backslashes.
_JSON_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000", re.IGNORECASE)


class JsonRefused(ValueError):
    """A document this app will not read; the message says why, for a 422 (in English as
    `str(error)`, coded as `said` for a page)."""

    def __init__(self, said: Sentence, field: str | None = None) -> None:
        super().__init__(english(said))
        self.said = said
        self.field = field  # the dotted path of the value at fault, when one is


NOT_A_JSON_NUMBER = register(
    "json.not_a_number", _l("%(name)s is not a number JSON can carry; send a finite number or null")
)
INT_OUT_OF_RANGE = register(
    "json.int_out_of_range", _l("the integer %(digits)s is outside the range -2^63..2^63-1")
)
NUMBER_TOO_LARGE = register(
    "json.number_too_large", _l("the number %(digits)s is too large to store")
)
TOO_DEEP = register(
    "json.too_deep", _l("nested %(depth)s levels deep; at most %(most)s are accepted")
)
TOO_MANY_KEYS_IN_BODY = register(
    "json.too_many_keys_in_body",
    _l("the body has about %(keys)s keys; at most %(most)s are accepted"),
)
TOO_MANY_KEYS = register(
    "json.too_many_keys", _l("an object has %(keys)s keys; at most %(most)s are accepted")
)
NUL_TEXT = register("json.nul", _l("text may not contain the NUL character (U+0000)"))
INVALID_JSON = register("json.invalid", _l("invalid JSON: %(detail)s"))
NESTED_TOO_DEEP = register("json.nested_too_deep", _l("nested too deep"))
DUPLICATE_KEY = register(
    "json.duplicate_key", _l("the key '%(key)s' appears twice in one object; send it once")
)
LONE_SURROGATE = register(
    "json.lone_surrogate",
    _l("%(field)s holds text that is not valid Unicode (a lone surrogate such as \\udc80)"),
)
NUL_IN_FIELD = register(
    "input.nul", _l("%(field)s holds the NUL character (U+0000), which no text may contain")
)
INT_OUT_OF_RANGE_IN_FIELD = register(
    "input.int_out_of_range", _l("%(field)s holds an integer outside the range -2^63..2^63-1")
)
NOT_FINITE_IN_FIELD = register(
    "input.not_finite",
    _l("%(field)s holds NaN or an infinite number, which cannot be stored; send a finite number"),
)
# The codes whose `field` param names where the value is (the gate's walk finds it).
GATE_CODES = frozenset(
    kind.code
    for kind in (LONE_SURROGATE, NUL_IN_FIELD, INT_OUT_OF_RANGE_IN_FIELD, NOT_FINITE_IN_FIELD)
)


class NotJson(JsonRefused):
    """The text is not JSON at all (as opposed to JSON this app refuses)."""


def _refuse_constant(name: str) -> Any:
    raise JsonRefused(NOT_A_JSON_NUMBER(name=name))


def _none_for_constant(_name: str) -> None:
    return None


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS or not INT_MIN <= int(digits) <= INT_MAX:
        shown = digits if len(digits) <= 30 else f"{digits[:20]}... ({len(digits)} digits)"
        raise JsonRefused(INT_OUT_OF_RANGE(digits=shown))
    return int(digits)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonRefused(NUMBER_TOO_LARGE(digits=text[:30]))
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len(pairs) > MAX_OBJECT_KEYS:  # refused before any validator makes an error of each
        raise JsonRefused(TOO_MANY_KEYS(keys=len(pairs), most=MAX_OBJECT_KEYS))
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
        shown = repeated if len(repeated) <= 60 else f"{repeated[:60]}..."
        raise JsonRefused(DUPLICATE_KEY(key=shown.encode("utf-8", "replace").decode()))
    return value


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """The parser builds only acyclic containers, yet each few hundred of them start a
    cyclic collection that walks all those built so far: 5 MB of `[],` took 4 s, four
    fifths of it collecting, with the GIL held. Paused for the parse; a parse on another
    thread that finds it paused leaves it to the one that paused it."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def loads_strict(
    text: str | bytes, *, max_depth: int = MAX_DOCUMENT_DEPTH, nan_as_null: bool = False
) -> Any:
    """Parse one JSON document, refusing non-finite numbers, integers past 64 bits,
    nesting past `max_depth`, repeated keys and lone surrogates. `nan_as_null` reads NaN
    and Infinity as null instead, for other tools' result files, which write them for
    statistics they could not compute."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8")
    # Every level opens with a bracket, so a text with few brackets (strings included)
    # cannot nest deeper than their count: only a text with more is measured.
    if text.count("[") + text.count("{") > max_depth:
        depth = nesting_depth(text)
        if depth > max_depth:
            raise JsonRefused(TOO_DEEP(depth=depth, most=max_depth))
    if len(text) > PARSE_OFF_LOOP_BYTES:
        keys = text.count('":')
        if keys > MAX_BODY_KEYS:
            raise JsonRefused(TOO_MANY_KEYS_IN_BODY(keys=keys, most=MAX_BODY_KEYS))
    # PostgreSQL text cannot hold NUL; refused on every database (the substring test first:
    # it is cheaper than the pattern, and the pattern needs one of them to match).
    if ("\\u0000" in text or "\\U0000" in text) and _JSON_NUL.search(text):
        raise JsonRefused(NUL_TEXT())
    constant: Callable[[str], Any] = _none_for_constant if nan_as_null else _refuse_constant
    try:
        with _cyclic_gc_paused() if len(text) > PARSE_OFF_LOOP_BYTES else nullcontext():
            value = json.loads(
                text,
                parse_constant=constant,
                parse_int=_bounded_int,
                parse_float=_finite_float,
                object_pairs_hook=_unique_keys,
            )
    except json.JSONDecodeError as error:
        raise NotJson(INVALID_JSON(detail=str(error))) from error
    except RecursionError as error:  # the depth check should make this unreachable
        raise JsonRefused(NESTED_TOO_DEEP()) from error
    if may_hold_surrogate(text):
        field = lone_surrogate_at(value)
        if field is not None:
            raise JsonRefused(LONE_SURROGATE(field=field or "body"), field=field or "body")
    return value


# One large body parsed at a time. Parsing holds the GIL between bytecodes, so each thread
# parsing beside the event loop takes a share of it: with four large bodies at once the loop
# waited its turn behind four threads, and /healthz took 110 ms. Queued, a body waits
# without the GIL, and the loop shares it with one parse only.
_LARGE_PARSE = threading.BoundedSemaphore(1)


def _loads_large(body: bytes) -> Any:
    with _LARGE_PARSE:
        return loads_strict(body)


async def loads_strict_off_loop(body: bytes) -> Any:
    """`loads_strict` for a request body: a large one is parsed on a worker thread, one
    such body at a time."""
    if len(body) > PARSE_OFF_LOOP_BYTES:
        return await run_in_threadpool(_loads_large, body)
    return loads_strict(body)


def check_free_form(
    value: Any,
    *,
    max_depth: int = MAX_FREE_FORM_DEPTH,
    max_nodes: int = MAX_FREE_FORM_NODES,
) -> str | None:
    """Why `value` cannot be kept as a free-form JSON value, or None when it can.

    Walks with an explicit stack, so a hostile depth stops here rather than in whatever
    recurses next (validation, serialisation, the fingerprint of a submission).
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            return f"more than {max_nodes:,} values; keep free-form objects small"
        if isinstance(item, dict | list | tuple):
            if depth >= max_depth:
                return f"nested deeper than {max_depth} levels"
            if isinstance(item, dict):
                if not all(isinstance(key, str) for key in item):
                    return "object keys must be text"
                children = item.values()
            else:
                children = item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not INT_MIN <= item <= INT_MAX:
                return "an integer is outside the range -2^63..2^63-1"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "NaN and infinite numbers cannot be stored; use null or a finite number"
            # One range for every number, as the OpenAPI schema states it: JSON Schema
            # cannot tell 1e19 written with an exponent from the integer it equals.
            if not INT_MIN <= item <= INT_MAX:
                return "a number is outside the range -2^63..2^63-1"
        elif isinstance(item, str):
            if len(item) > MAX_FREE_FORM_TEXT:
                return f"a text value is longer than {MAX_FREE_FORM_TEXT:,} characters"
        else:
            return f"{type(item).__name__} is not a JSON value"
    where = lone_surrogate_at(value)
    if where is not None:
        return f"{where or 'a key'} holds text that is not valid Unicode (a lone surrogate)"
    return None


def hostile_value_at(value: Any, where: str = "") -> Sentence | None:
    """The input gate every entry shares (the form, the JSON API, imports, the CLI): what
    no stored text or number may hold, said naming the field (its dotted path), or None.
    Text with NUL (PostgreSQL cannot store it; SQLite would, and export it) or a lone
    surrogate (no page can show it); an integer past 64 bits; NaN or infinity. Walks
    without recursion."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            found = text_refusal(item, path)
            if found is not None:
                return found
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str):
                    found = text_refusal(key, path)
                    if found is not None:
                        return found
                stack.append((child, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, list | tuple):
            stack.extend(
                (child, f"{path}.{index}" if path else str(index))
                for index, child in enumerate(item)
            )
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int) and not INT_MIN <= item <= INT_MAX:
            return INT_OUT_OF_RANGE_IN_FIELD(field=path or "body")
        elif isinstance(item, float) and not math.isfinite(item):
            return NOT_FINITE_IN_FIELD(field=path or "body")
    return None


def text_refusal(text: str, path: str) -> Sentence | None:
    if "\x00" in text:
        return NUL_IN_FIELD(field=path or "body")
    if has_lone_surrogate(text):
        return LONE_SURROGATE(field=path or "body")
    return None


NOT_A_BOOL = register("input.not_a_bool", _l("give a number, not true or false"))


def not_a_bool(value: Any) -> Any:
    """JSON `true` is not the number 1: numbers must be numbers (or, from a form, digits)."""
    if isinstance(value, bool):
        raise refusal(NOT_A_BOOL)
    return value


def free_form(value: Any) -> Any:
    """Kept as given, within bounds checked before anything recurses into it."""
    problem = check_free_form(value)
    if problem is not None:
        raise ValueError(problem)
    return value


class StrictJsonRequest(Request):
    """A request whose `.json()` is `loads_strict`; a refusal reads as a JSON decode error,
    which FastAPI answers with a 422 naming the body."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            try:
                self._json = await loads_strict_off_loop(body)
            except (JsonRefused, UnicodeDecodeError) as error:
                # The 422 names the field at fault when the refusal knows it (main.py).
                self.state.refused_json_field = getattr(error, "field", None)
                raise json.JSONDecodeError(
                    str(error), body.decode("utf-8", "replace")[:200], 0
                ) from error
        return self._json


class StrictJsonRoute(APIRoute):
    """For routers whose bodies FastAPI parses itself (`Body()` parameters)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict_handler(request: Request) -> Response:
            return await handler(StrictJsonRequest(request.scope, request.receive))

        return strict_handler
