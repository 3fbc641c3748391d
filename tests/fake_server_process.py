"""The fake OpenAI-compatible server (tests/bench/fake_openai_server.py) in a process of its
own, for tests whose client runs in another process or must not share its event loop."""

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

FAKE_SERVER = Path(__file__).resolve().parent / "bench" / "fake_openai_server.py"


@contextmanager
def fake_server_process() -> Iterator[str]:
    """Base URL (.../v1) of a streaming server on 127.0.0.1 whose timing the model name sets."""
    process = subprocess.Popen(
        [sys.executable, str(FAKE_SERVER), "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)
