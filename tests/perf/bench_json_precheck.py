"""The strict JSON reader's nesting pre-check on 5 MB bodies built to be its worst case.

The pre-check measures how deep a body nests before the parser recurses. It once skipped
strings with a regular expression that backtracked on an unterminated string of escaped
quotes: 32 KB of `[` x 65, `"`, then `\\"` repeated took 3-5 s, 64 KB 15 s, 5 MB about a
day. Target: every 5 MB shape below checked in under 0.5 s (the figure printed is the
nesting check alone, then the whole `loads_strict` refusal or parse).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.security.json_input import JsonRefused, loads_strict  # noqa: E402
from app.security.json_scan import nesting_depth  # noqa: E402

SIZE = 5 * 1024 * 1024


def shapes() -> dict[str, bytes]:
    escaped_quotes = b"[" * 65 + b'"' + b'\\"' * ((SIZE - 66) // 2)
    pairs = b"[" + b"[]," * ((SIZE - 2) // 3) + b"[]]"
    deep_then_flat = (b"[" * 64 + b"]" * 64) * (SIZE // 128)
    strings = b"[" + b'"a",' * ((SIZE - 2) // 4) + b'"a"]'
    backslashes = b"[" + b'"\\\\",' * ((SIZE - 2) // 5) + b'"x"]'
    only_openers = b"[" * SIZE
    return {
        '65 [ then an unterminated string of \\"': escaped_quotes,
        "[] pairs": pairs,
        "64 deep, repeated": deep_then_flat,
        "short strings": strings,
        "escaped backslashes": backslashes,
        "[ only": only_openers,
    }


def timed(action, body: bytes) -> float:  # noqa: ANN001
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        try:
            action(body)
        except JsonRefused:
            pass
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    print(f"{'5 MB of':<44} {'nesting check':>14} {'loads_strict':>13}")
    for name, body in shapes().items():
        check = timed(nesting_depth, body)
        whole = timed(loads_strict, body)
        print(f"{name:<44} {check * 1000:>11.0f} ms {whole * 1000:>10.0f} ms")


if __name__ == "__main__":
    main()
