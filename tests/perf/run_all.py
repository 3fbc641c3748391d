"""Run every benchmark script in this folder (bench_*.py) and print its figures."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failures = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n=== {script.name} ===", flush=True)
        failures += subprocess.call([sys.executable, str(script)], cwd=HERE.parent.parent) != 0
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
