"""The strict JSON reader: its nesting pre-check is exact on valid JSON and linear on the
body that made the old one quadratic; repeated keys are refused, not silently merged."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from app.security.json_input import JsonRefused, loads_strict
from app.security.json_scan import nesting_depth

ROOT = Path(__file__).resolve().parents[2]
TRICKY_TEXT = st.text(alphabet='[]{}"\\/au\u00e9\u3000', max_size=8)
DOCUMENTS = st.recursive(
    st.none() | st.integers() | TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY_TEXT, inner, max_size=3),
    max_leaves=30,
)


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(item) for item in value.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(DOCUMENTS)
def test_nesting_depth_is_exact_on_valid_json(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert nesting_depth(text) == depth_of(value)
        assert nesting_depth(text.encode()) == depth_of(value)


def test_the_reported_body_is_refused_without_backtracking() -> None:
    """65 `[`, a quote, then escaped quotes: 64 KB took 15 s before (quadratic), so 1 MB
    would take about an hour; it must be refused as too deep at once. It runs in a child
    process (a regular expression holds the GIL, so a thread could not be given up on);
    the generous limit only tells a hang from an answer (speed is measured in tests/perf)."""
    script = (
        "from app.security.json_input import JsonRefused, loads_strict\n"
        "try:\n"
        "    loads_strict(b'[' * 65 + b'\"' + b'\\\\\"' * 512 * 1024)\n"
        "except JsonRefused as error:\n"
        "    print(error)\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the nesting check did not finish within a minute")
    assert "65 levels deep" in done.stdout, done.stderr


@pytest.mark.parametrize(
    "text",
    ['{"a": 1, "a": 2}', '{"x": {"b": [], "b": []}}', '[{"k": 1, "\\u006b": 2}]'],
)
def test_a_repeated_key_is_refused_naming_it(text: str) -> None:
    with pytest.raises(JsonRefused, match="appears twice"):
        loads_strict(text)


def test_the_api_refuses_a_repeated_key(client: TestClient) -> None:
    body = '{"action": "accept", "action": "reject", "reason": "x"}'
    response = client.post(
        "/api/records/1/review", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "body"
    assert "'action' appears twice" in response.text
