"""Linear-time looks at JSON text and values, before and after parsing.

`nesting_depth` runs before the parser recurses: it must stay linear whatever the text, and
fast enough for the largest body the app takes (5 MB). A regular expression that skips
strings backtracks on an unterminated string full of escaped quotes (quadratic: 64 KB took
15 s), and a Python loop over every character takes about a second for 5 MB, so the scan is
a handful of whole-array numpy operations (numpy comes with the GGUF reader already).

`lone_surrogate_at` finds text that is not valid Unicode: JSON's `\\udc80` escape decodes
to a lone UTF-16 surrogate, which Python keeps in a str but no UTF-8 encoder can write, so
one stored value made every page and list that showed it fail.
"""

import re
from typing import Any

import numpy as np

_QUOTE = 34
_STEP = np.zeros(256, dtype=np.int8)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1
# A JSON escape for a UTF-16 surrogate (paired or not): only text that has one can decode
# to a lone surrogate, so values are walked only then.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def nesting_depth(text: str | bytes) -> int:
    """How deep arrays and objects nest, without parsing: brackets inside strings are
    skipped. (For valid JSON this is exact; for invalid JSON it can differ only after the
    first error, where the parser stops anyway.)"""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    # Escape pairs first, left to right, as a reader does: in a run of backslashes each
    # pair is one escaped backslash, so a quote is escaped exactly when an odd run
    # precedes it. What is left of the quotes are the edges of strings.
    unescaped = raw.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    data = np.frombuffer(unescaped, dtype=np.uint8)
    steps = _STEP[data]  # +1 for [ {, -1 for ] }, 0 for everything else
    brackets = np.flatnonzero(steps)
    if brackets.size == 0:
        return 0
    edges = np.flatnonzero(data == _QUOTE)
    if edges.size:
        # A bracket is outside every string when an even number of edges precede it.
        brackets = brackets[np.searchsorted(edges, brackets) % 2 == 0]
    return int(np.cumsum(steps[brackets], dtype=np.int64).max(initial=0))


def may_hold_surrogate(text: str | bytes) -> bool:
    """Whether the JSON text escapes a surrogate anywhere (valid pairs included)."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", "replace")
    return _SURROGATE_ESCAPE.search(text) is not None


def has_lone_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def lone_surrogate_at(value: Any, where: str = "") -> str | None:
    """The dotted path of the first text (value or object key) in `value` that holds a lone
    surrogate, `where` itself for a top-level string, or None. Walks without recursion."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if has_lone_surrogate(item):
                return path
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and has_lone_surrogate(key):
                    return path
                stack.append((child, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, list | tuple):
            stack.extend(
                (child, f"{path}.{index}" if path else str(index))
                for index, child in enumerate(item)
            )
    return None
