"""Accepted records drive the catalog: verified pairs, measured speeds, last known-good."""

from typing import Any

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from tests.records.conftest import GLM, GLM_FP8, MAC_512, accept, post_record


def detail(client: TestClient, hardware: str, profile: str = "balanced") -> dict:
    response = client.get(f"/api/models/{GLM}/hardware/{hardware}/profiles/{profile}")
    assert response.status_code == 200, response.text
    return response.json()


def fit_row(client: TestClient, hardware: str) -> dict:
    rows = client.get(f"/api/models/{GLM}/fit").json()["rows"]
    return next(row for row in rows if row["hardware"] == hardware)


def mac_record(
    valid: dict,
    artifact: str,
    runtime: str,
    version: str = "0.31.2",
    decode: float = 40.0,
    **overrides: Any,
) -> dict:
    valid.update(
        hardware=MAC_512,
        artifact=artifact,
        runtime=runtime,
        runtime_version=version,
        gpu_count=1,
        applied_values={"context": 16384},
        command=f"{runtime} serve {artifact}",
        **overrides,
    )
    for point in valid["measurements"]:
        point.update(
            decode_tokens_per_s=decode, itl_ms=round(1000 / decode, 2), peak_memory_gb_per_gpu=360
        )
    return valid


class TestUnverifiedRouteBecomesVerified:
    def test_mlx_route_on_the_mac_gets_its_command(self, client: TestClient, valid: dict) -> None:
        before = detail(client, MAC_512)
        assert before["commands"] == [] and before["estimate_only"] is True
        assert before["verified_pair"] is False and before["verdict"] == "experimental"
        body = mac_record(valid, before["artifact"], before["runtime"])
        record_id = post_record(client, body).json()["id"]
        assert detail(client, MAC_512)["commands"] == []  # pending evidence counts for nothing
        accept(client, record_id)
        after = detail(client, MAC_512)
        assert after["verified_pair"] is True and after["estimate_only"] is False
        assert [c["runtime"] for c in after["commands"]] == [before["runtime"]]
        assert after["verdict"] == "fits"
        page = BeautifulSoup(
            client.get(f"/models/{GLM}/hardware/{MAC_512}/profiles/balanced").text, "html.parser"
        )
        assert page.select_one("#estimate-only") is None
        assert "0.31.2" in page.select_one("#verdict").text  # verified for that version

    def test_a_gguf_route_verified_by_records(self, client: TestClient, valid: dict) -> None:
        gguf = "glm-5.3-flash-q8-0"
        record_id = post_record(client, mac_record(valid, gguf, "llama-cpp", "b6900")).json()["id"]
        accept(client, record_id)
        after = detail(client, MAC_512)
        assert after["artifact"] == gguf and after["verified_pair"] is True
        assert after["commands"] and after["commands"][0]["argv"][0] == "llama-server"

    def test_failures_and_retractions_do_not_verify(self, client: TestClient, valid: dict) -> None:
        route = detail(client, MAC_512)
        failed = mac_record(
            dict(valid),
            route["artifact"],
            route["runtime"],
            outcome="load_failure",
            measurements=[],
        )
        accept(client, post_record(client, failed).json()["id"])
        assert detail(client, MAC_512)["commands"] == []
        ok_id = post_record(client, mac_record(valid, route["artifact"], route["runtime"])).json()[
            "id"
        ]
        accept(client, ok_id)
        assert detail(client, MAC_512)["commands"]
        client.post(
            f"/api/records/{ok_id}/review", json={"action": "retract", "reason": "wrong machine"}
        )
        assert detail(client, MAC_512)["commands"] == []


class TestMeasuredNumbers:
    def test_fit_table_switches_from_reported_to_measured(
        self, client: TestClient, valid: dict
    ) -> None:
        before = fit_row(client, MAC_512)
        assert before["token_generation"]["basis"] == "reported"
        assert before["profile_status"] == "verification_pending"
        route = detail(client, MAC_512)
        for decode in (38.0, 42.0):
            body = mac_record(
                dict(valid, measurements=[dict(m) for m in valid["measurements"]]),
                route["artifact"],
                route["runtime"],
                decode=decode,
            )
            accept(client, post_record(client, body).json()["id"])
        after = fit_row(client, MAC_512)
        speed = after["token_generation"]
        assert speed["basis"] == "measured" and speed["records"] == 2
        assert (speed["low"], speed["high"]) == (40.0, 40.0)  # median per context length
        assert after["profile_status"] == "verified"
        statuses = {p["slug"]: p["status"] for p in after["profiles"]}
        assert statuses == {
            "balanced": "verified",
            "speed": "verification_pending",
            "long-context": "verification_pending",
        }

    def test_server_row_switches_from_estimated_to_measured(
        self, client: TestClient, valid: dict, h200: str
    ) -> None:
        assert fit_row(client, h200)["token_generation"]["basis"] == "estimated"
        accept(client, post_record(client, valid).json()["id"])
        speed = fit_row(client, h200)["token_generation"]
        assert speed["basis"] == "measured" and speed["records"] == 1
        assert (speed["low"], speed["high"]) == (88.0, 95.0)
        assert detail(client, h200)["token_generation"]["basis"] == "measured"

    def test_pending_and_rejected_records_change_nothing(
        self, client: TestClient, valid: dict, h200: str
    ) -> None:
        rejected = post_record(client, valid).json()["id"]
        client.post(f"/api/records/{rejected}/review", json={"action": "reject", "reason": "x"})
        post_record(client, valid)
        row = fit_row(client, h200)
        assert row["token_generation"]["basis"] == "estimated"
        assert row["profile_status"] == "verification_pending"


class TestAnotherRoutesRecord:
    """A working run of the page's second command (vLLM where SGLang is recommended) counts
    for the profile, with its own figures beside the recommended route's."""

    def test_a_vllm_record_counts_on_an_sglang_recommended_profile(
        self, client: TestClient, valid: dict, h200: str
    ) -> None:
        before = detail(client, h200)
        assert before["runtime"] == "sglang" and before["status"] == "verification_pending"
        valid.update(runtime="vllm", runtime_version="0.30.1", command="vllm serve x --tp 8")
        accept(client, post_record(client, valid).json()["id"])
        after = detail(client, h200)
        assert after["runtime"] == "sglang" and after["status"] == "verified"
        # The recommended route keeps its own figure; vLLM's measured one is beside it.
        assert after["token_generation"]["basis"] == before["token_generation"]["basis"]
        [other] = after["other_routes"]
        assert (other["runtime"], other["artifact"]) == ("vllm", GLM_FP8)
        speed = other["token_generation"]
        assert (speed["low"], speed["high"], speed["basis"]) == (88.0, 95.0, "measured")
        assert fit_row(client, h200)["profile_status"] == "verified"
        page = BeautifulSoup(
            client.get(f"/models/{GLM}/hardware/{h200}/profiles/balanced").text, "html.parser"
        )
        status = page.select_one("#profile-status").text
        assert "no accepted record" not in status and "another route" in status
        assert "88.0 ~ 95.0" in page.select_one('.other-route[data-runtime="vllm"]').text
        table = BeautifulSoup(client.get(f"/models/{GLM}").text, "html.parser")
        row = table.select_one(f'tr[data-hardware="{h200}"]')
        assert row.select_one(".status").text.strip() == "verified"
        assert "88.0 ~ 95.0" in row.select_one('.other-route[data-runtime="vllm"]').text
        # Another profile is not verified by it.
        assert detail(client, h200, "speed")["status"] == "verification_pending"


class TestContradictedReportedFigure:
    """A reported figure above the roofline, or far from a measurement on the same hardware
    and route, is marked contradicted wherever it is shown."""

    def test_above_the_roofline_on_every_surface(self, client: TestClient) -> None:
        speed = detail(client, MAC_512)["token_generation"]
        assert speed["basis"] == "reported" and (speed["low"], speed["high"]) == (81.3, 90.3)
        why = speed["contradicted"]
        assert why["code"] == "figure.reported_above_roofline"
        assert why["params"]["roofline"] == 43.6 and "43.6 tok/s" in why["text"]
        assert fit_row(client, MAC_512)["token_generation"]["contradicted"] == why
        page = BeautifulSoup(
            client.get(f"/models/{GLM}/hardware/{MAC_512}/profiles/balanced").text, "html.parser"
        )
        line = page.select_one("#token-generation")
        assert line.select_one(".contradicted") and "43.6" in line.text
        table = BeautifulSoup(client.get(f"/models/{GLM}").text, "html.parser")
        row = table.select_one(f'tr[data-hardware="{MAC_512}"]')
        assert row.select_one("td.num .contradicted") is not None
        assert "43.6" in row.select_one(".contradicted-why").text
        ko = BeautifulSoup(
            client.get(f"/models/{GLM}/hardware/{MAC_512}/profiles/balanced?lang=ko").text,
            "html.parser",
        )
        assert "contradicted" not in ko.select_one("#token-generation").text

    def test_a_measurement_marks_the_other_profiles_reported_figure(
        self, client: TestClient, valid: dict
    ) -> None:
        route = detail(client, MAC_512)
        for decode in (39.5, 41.8):
            body = mac_record(
                dict(valid, measurements=[dict(m) for m in valid["measurements"]]),
                route["artifact"],
                route["runtime"],
                decode=decode,
            )
            accept(client, post_record(client, body).json()["id"])
        assert detail(client, MAC_512)["token_generation"]["basis"] == "measured"
        for profile in ("speed", "long-context"):
            speed = detail(client, MAC_512, profile)["token_generation"]
            assert speed["basis"] == "reported" and speed["contradicted"], profile
        table = BeautifulSoup(client.get(f"/models/{GLM}").text, "html.parser")
        links = table.select_one(f'tr[data-hardware="{MAC_512}"] .profile-links')
        for profile in ("speed", "long-context"):
            figure = links.select_one(f'a[data-profile="{profile}"] + .sub')
            assert "81.3~90.3 tok/s" in figure.text and figure.select_one(".contradicted")


class TestDetailPage:
    def test_last_known_good_measured_points_and_estimate_error(
        self, client: TestClient, valid: dict, h200: str
    ) -> None:
        assert detail(client, h200)["records"]["last_known_good"] is None
        first = post_record(client, valid).json()["id"]
        accept(client, first)
        valid.update(
            runtime_version="0.5.11",
            command="python -m sglang.launch_server --tp 8 --context-length 32768",
        )
        second = post_record(client, valid).json()["id"]
        accept(client, second)
        pending = post_record(client, valid).json()["id"]  # counted, but no evidence
        data = detail(client, h200)
        records = data["records"]
        good = records["last_known_good"]
        assert good["id"] == second and good["runtime_version"] == "0.5.11"
        assert "32768" in good["command"] and good["same_profile"] is True
        assert [p["records"] for p in data["measured"]] == [2, 2]
        assert [r["id"] for r in records["latest"]] == [second, first]  # accepted, newest first
        assert (records["accepted"], records["pending"]) == (2, 1)
        assert records["pending_url"].endswith(f"model={GLM}&hardware={h200}&state=pending")
        assert pending not in [r["id"] for r in records["latest"]]
        check = data["estimate_vs_measured"]
        assert data["artifact"] == GLM_FP8  # the route the records ran
        nearest = min((4096, 95.0), (16384, 88.0), key=lambda p: abs(p[0] - data["start_context"]))
        assert check["decode"]["measured"] == nearest[1]  # at the recipe's starting context
        assert check["decode"]["ratio"] == round(nearest[1] / check["decode"]["estimated"], 3)
        # The check compares the same figure the page shows as the measured requirement.
        assert check["memory"]["measured"] == data["memory"]["required_gb_per_gpu"] == 124.0
        assert data["memory"]["basis"] == "measured"
        assert check["memory"]["estimated"] == data["memory"]["estimated_gb_per_gpu"]

        page = BeautifulSoup(
            client.get(f"/models/{GLM}/hardware/{h200}/profiles/balanced").text, "html.parser"
        )
        section = page.select_one("section#records")
        # This profile's known-good record has its own block; the evidence section does not
        # repeat it.
        assert section.select_one("#last-known-good") is None
        assert "0.5.11" in page.select_one("#known-good").text
        copy = page.select_one("#known-good button[data-copy]")["data-copy"]
        assert copy.endswith("--context-length 32768")
        assert len(section.select("#measured-points tbody tr")) == 2
        assert len(section.select("#record-list tbody tr")) == 2
        review = section.select_one("#pending-review")
        assert review.text == "1 pending record to review" and "state=pending" in review["href"]
        assert "×" in section.select_one("#estimate-error").text

    def test_other_profiles_point_at_the_last_known_good_of_any_profile(
        self, client: TestClient, valid: dict, h200: str
    ) -> None:
        accept(client, post_record(client, valid).json()["id"])
        good = detail(client, h200, "speed")["records"]["last_known_good"]
        assert good["profile"] == "balanced" and good["same_profile"] is False
        page = BeautifulSoup(
            client.get(f"/models/{GLM}/hardware/{h200}/profiles/speed").text, "html.parser"
        )
        assert "none accepted for this profile yet" in page.select_one("#last-known-good").text
        assert page.select_one("#no-known-good") is not None


def test_compare_highlights_the_differences(client: TestClient, valid: dict) -> None:
    a = post_record(client, valid).json()["id"]
    valid.update(runtime_version="0.5.11", environment={"driver": "590.10", "os": "Ubuntu 24.04"})
    valid["measurements"][0]["decode_tokens_per_s"] = 101.0
    b = post_record(client, valid).json()["id"]
    response = client.get(client.app.url_path_for("records:compare"), params={"a": a, "b": b})
    page = BeautifulSoup(response.text, "html.parser")
    differing = {row["data-label"] for row in page.select("tr.diff")}
    assert {
        "runtime version",
        "driver",
        "runtime_build",
        "decode (tok/s) at 4,096 tokens x 1",
    } <= differing
    same = {row["data-label"] for row in page.select("tr[data-label]:not(.diff)")}
    assert {"model", "os", "TTFT (ms) at 4,096 tokens x 1"} <= same
    assert client.get("/records/compare", params={"a": a, "b": 999}).status_code == 404
