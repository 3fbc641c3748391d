"""The plan check's rows (`plan_checks.yaml`): each parses into a plan request, cites its
source, publisher and words, and comes from a publisher `servers.yaml` does not cite."""

from pathlib import Path

import pytest
import yaml

from tests.accuracy.plan_check import (
    MEET_FACTOR,
    PLAN_CHECKS,
    REFUSE_FACTOR,
    checks,
    cited_publishers,
    measured_decode,
)

ROWS = yaml.safe_load(PLAN_CHECKS.read_text())["rows"]


def test_every_row_parses_into_a_plan_request():
    parsed = checks()
    assert len(parsed) == len(ROWS)
    for check in parsed:
        body = check.body(MEET_FACTOR * check.decode)
        assert body["users"] == check.concurrency >= 2
        assert body["hardware"] == [{"gpu": check.gpu, "count": check.gpus}] or (
            body["hardware"][0]["memory_gb"] == check.memory_gb
        )
        assert body["evidence"] == "ignore"
        assert body["prompt_tokens"] >= 1 and body["output_tokens"] >= 1
        assert body["min_decode_tokens_per_s"] == pytest.approx(0.75 * check.decode, abs=1e-3)
        assert (
            check.body(REFUSE_FACTOR * check.decode)["min_decode_tokens_per_s"]
            > body["min_decode_tokens_per_s"]
        )


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['model']}-{r['gpu']}-{r['concurrency']}")
def test_every_row_cites_a_new_publisher(row):
    for field in ("source", "publisher", "quote"):
        assert isinstance(row.get(field), str) and row[field].strip(), field
    assert row["source"].startswith("https://")
    assert row["publisher"] not in cited_publishers()
    assert 2 <= row["concurrency"] <= 128
    assert row["runtime"] in {"vllm", "sglang"}
    assert not row.get("speculative")


def test_decode_is_read_from_tpot_then_itl_then_the_stated_speed():
    assert measured_decode({"tpot_ms": 20.0, "itl_ms": 10.0}) == (50.0, "1000/mean TPOT")
    assert measured_decode({"itl_ms": 10.0}) == (100.0, "1000/mean ITL")
    speed = {"decode_tokens_per_s_per_request": 42.0}
    assert measured_decode(speed) == (42.0, "per-request speed as reported")
    with pytest.raises(ValueError):
        measured_decode({"source": "x"})


def test_cited_publishers_hold_the_fitting_ones():
    cited = cited_publishers()
    assert "GPUStack docs" in cited and "dstack blog (benchmarks repo raw data)" in cited


def test_a_handful_of_rows_parse_from_a_file(tmp_path: Path):
    data = yaml.safe_load(PLAN_CHECKS.read_text())
    small = {"models": data["models"], "rows": ROWS[:3]}
    path = tmp_path / "few.yaml"
    path.write_text(yaml.safe_dump(small))
    few = checks(path)
    assert [c.concurrency for c in few] == [r["concurrency"] for r in ROWS[:3]]
    assert all(isinstance(c.model, (str, dict)) for c in few)
