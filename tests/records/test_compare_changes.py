"""One change at a time: the settings that differ between two records, each counted once,
and what the figures did, each with its noise band (or the band said to be unknown)."""

import copy
from typing import Any

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.i18n.sentences import Sentence
from app.models import Artifact, Hardware, LlmModel, Measurement, Profile, Record, Runtime
from app.records.comparison.effects import measurement_effects, sample_band, wilson_band
from app.records.comparison.setting_changes import attribution, setting_changes
from tests.records.conftest import accept, post_record


def record(
    record_id: int = 1,
    runtime: str = "llama-cpp",
    command: str = "",
    measurements: list[Measurement] | None = None,
    **fields: Any,
) -> Record:
    """A record in memory, with the catalog rows it points at."""
    values: dict[str, Any] = dict(
        id=record_id,
        model=LlmModel(slug="m"),
        artifact=Artifact(slug="a"),
        runtime=Runtime(slug=runtime),
        runtime_version="b6100",
        hardware=Hardware(slug="h"),
        gpu_count=1,
        profile=Profile(slug="balanced"),
        command=command,
        applied_values={},
        environment={},
        outcome="ok",
        measurements=measurements or [],
    )
    values.update(fields)
    return Record(**values)


def point(**fields: Any) -> Measurement:
    fields.setdefault("details", {})
    return Measurement(context_length=4096, concurrency=1, **fields)


class TestSettings:
    def test_one_knob_and_the_flags_that_carry_it_are_one_setting(self) -> None:
        # On llama.cpp --ctx-size is context x parallel: raising the parallel slots moves both.
        a = record(command="llama-server -c 8192 -np 1", applied_values={"max_concurrency": 1})
        b = record(command="llama-server -c 16384 -np 2", applied_values={"max_concurrency": 2})
        [change] = setting_changes(a, b)
        assert (change.kind, change.name, change.a, change.b) == (
            "applied value",
            "max_concurrency",
            1,
            2,
        )
        assert change.flags == ("-c", "-np")
        assert attribution([change]) == "1 setting changed: -c -np (max_concurrency)"

    def test_a_flag_alone_is_named_as_written(self) -> None:
        a = record(command="llama-server -c 8192")
        b = record(command="llama-server --ctx-size 8192 --no-mmap")
        changes = setting_changes(a, b)
        assert [(c.kind, c.label, c.a, c.b) for c in changes] == [
            ("command", "--no-mmap", None, "set")
        ]

    def test_every_kind_of_setting_counts(self) -> None:
        a = record(command="llama-server -ub 512", environment={"driver": "580"})
        b = record(
            command="llama-server -ub 1024", environment={"driver": "590"}, runtime_version="b6200"
        )
        changes = setting_changes(a, b)
        assert {(c.kind, c.name) for c in changes} == {
            ("setup", "runtime version"),
            ("command", "-ub"),
            ("environment", "driver"),
        }
        assert attribution(changes) == "3 settings changed: the effect cannot be attributed"

    def test_the_same_setup_written_differently_is_no_change(self) -> None:
        a = record(
            runtime="vllm",
            command="vllm serve m --max-model-len=4096 -tp 2",
            applied_values={"context": 4096},
        )
        b = record(
            runtime="vllm",
            command="vllm serve --model m --max_model_len 4096 --tensor-parallel-size 2",
            applied_values={"context": 4096},
        )
        assert setting_changes(a, b) == []
        assert attribution([]).startswith("No setting changed")

    def test_flags_fold_into_a_knob_only_on_one_runtime(self) -> None:
        a = record(
            runtime="vllm",
            command="vllm serve m --max-model-len 4096",
            applied_values={"context": 4096},
        )
        b = record(
            runtime="sglang",
            command="python -m sglang.launch_server --model-path m --context-length 8192",
            applied_values={"context": 8192},
        )
        changes = setting_changes(a, b)
        assert not any(c.flags for c in changes)
        assert {
            ("setup", "runtime"),
            ("applied value", "context"),
            ("command", "--context-length"),
        } <= {(c.kind, c.name) for c in changes}


class TestEffects:
    def test_bands_that_do_not_overlap_are_beyond_noise(self) -> None:
        a = record(
            1,
            measurements=[
                point(ttft_ms=310.0, details={"samples": {"ttft_ms": [300.0, 310.0, 320.0]}})
            ],
        )
        b = record(
            2,
            measurements=[
                point(ttft_ms=250.0, details={"samples": {"ttft_ms": [240.0, 250.0, 262.0]}})
            ],
        )
        [effect] = measurement_effects(a, b)
        assert (effect.verdict, effect.direction) == ("beyond noise", "better")
        assert (effect.band_b.low, effect.band_b.high) == (240.0, 262.0)
        assert effect.change_pct == pytest.approx(-19.35, abs=0.01)

    def test_overlapping_bands_are_within_noise(self) -> None:
        a = record(
            1,
            measurements=[
                point(
                    decode_tokens_per_s=90.0,
                    details={"samples": {"decode_tokens_per_s": [85.0, 90.0, 96.0]}},
                )
            ],
        )
        b = record(
            2,
            measurements=[
                point(
                    decode_tokens_per_s=94.0,
                    details={"samples": {"decode_tokens_per_s": [92.0, 94.0, 99.0]}},
                )
            ],
        )
        [effect] = measurement_effects(a, b)
        assert effect.verdict == "within noise" and effect.direction is None

    def test_a_single_figure_has_an_unknown_band(self) -> None:
        a = record(1, measurements=[point(peak_memory_gb_per_gpu=20.0)])
        b = record(2, measurements=[point(peak_memory_gb_per_gpu=22.0)])
        [effect] = measurement_effects(a, b)
        assert effect.band_a is None and effect.band_b is None
        assert effect.verdict == "noise unknown" and effect.direction is None
        assert "records 1 and 2 kept a single figure" in effect.unknown_because
        assert effect.unknown == Sentence("compare.unknown.both", {"a": "1", "b": "2"})
        assert sample_band([5.0]) is None

    def test_only_points_both_measured_are_compared(self) -> None:
        a = record(1, measurements=[point(ttft_ms=1.0)])
        b = record(
            2,
            measurements=[Measurement(context_length=8192, concurrency=1, ttft_ms=2.0, details={})],
        )
        assert measurement_effects(a, b) == []

    def test_the_task_pass_rate_has_a_wilson_band(self) -> None:
        task = {"name": "recall", "version": 2, "pass_rate": 0.9, "passed": 9, "total": 10}
        a = record(1, measurements=[point(details={"task": task})])
        b = record(
            2, measurements=[point(details={"task": {**task, "pass_rate": 0.2, "passed": 2}})]
        )
        [effect] = measurement_effects(a, b)
        assert effect.label == "task recall v2 pass rate"
        # 9 of 10: the published 95 % Wilson interval is 0.596 .. 0.982.
        assert (round(effect.band_a.low, 3), round(effect.band_a.high, 3)) == (0.596, 0.982)
        assert (effect.verdict, effect.direction) == ("beyond noise", "worse")
        other = record(3, measurements=[point(details={"task": {**task, "version": 3}})])
        assert measurement_effects(a, other) == []  # other prompts: not comparable

    def test_wilson_band_edges(self) -> None:
        assert wilson_band(0, 0) is None and wilson_band(5, 3) is None
        none, every = wilson_band(0, 20), wilson_band(20, 20)
        assert none.low == 0.0 and 0 < none.high < 0.2
        assert every.high == pytest.approx(1.0) and 0.8 < every.low < 1


# Through the API and the page, with records accepted by the real review path.
def with_samples(body: dict, ttft: list[float]) -> dict:
    body = copy.deepcopy(body)
    body["measurements"][0]["samples"] = {"ttft_ms": ttft}
    body["measurements"][0]["ttft_ms"] = sorted(ttft)[len(ttft) // 2]
    return body


def created(client: TestClient, body: dict) -> int:
    response = post_record(client, body)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def test_compare_api_names_the_one_setting_changed(client: TestClient, valid: dict) -> None:
    good = created(client, with_samples(valid, [300.0, 310.0, 320.0]))
    accept(client, good)
    changed = with_samples(valid, [240.0, 250.0, 262.0])
    changed["command"] += " --context-length 32768"
    changed["applied_values"]["context"] = 32768
    other = created(client, changed)
    response = client.get("/api/records/compare", params={"a": good, "b": other})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["settings_changed"] == 1
    assert body["attribution"] == "1 setting changed: --context-length (context)"
    [setting] = body["settings"]
    assert (setting["kind"], setting["a"], setting["b"]) == ("applied value", 16384, 32768)
    ttft = next(
        e for e in body["effects"] if e["metric"] == "ttft_ms" and e["point"] == "4,096 tokens x 1"
    )
    assert ttft["verdict"] == "beyond noise" and ttft["direction"] == "better"
    assert ttft["band_a"] == {
        "low": 300.0,
        "high": 320.0,
        "basis": "lowest to highest of 3 repeats",
    }
    decode = next(e for e in body["effects"] if e["metric"] == "decode_tokens_per_s")
    assert decode["verdict"] == "noise unknown" and decode["band_a"] is None
    assert "single figure" in decode["band_unknown_because"]


def test_compare_api_refuses_bad_ids(client: TestClient, valid: dict) -> None:
    record_id = created(client, valid)
    assert (
        client.get("/api/records/compare", params={"a": record_id, "b": 999_999}).status_code == 404
    )
    assert client.get("/api/records/compare", params={"a": record_id, "b": "x"}).status_code == 422
    assert client.get("/api/records/compare", params={"a": record_id}).status_code == 422


def test_compare_page_calls_out_several_settings(client: TestClient, valid: dict) -> None:
    a = created(client, valid)
    changed = copy.deepcopy(valid)
    changed.update(runtime_version="0.5.11", command=valid["command"] + " --disable-cuda-graph")
    changed["environment"]["driver"] = "590.10"
    b = created(client, changed)
    page = BeautifulSoup(
        client.get("/records/compare", params={"a": a, "b": b}).text, "html.parser"
    )
    callout = page.select_one("#attribution")
    assert callout["data-settings-changed"] == "3"
    assert "3 settings changed: the effect cannot be attributed" in callout.text
    rows = {row["data-setting"]: row for row in page.select("#setting-changes tbody tr")}
    assert set(rows) == {"runtime version", "--disable-cuda-graph", "driver"}
    assert "absent" in rows["--disable-cuda-graph"].text
    assert len(page.select("#effects tbody tr")) == 6  # TTFT, decode and memory at 4K, 16K
