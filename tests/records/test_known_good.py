"""The known-good configuration: the working record accepted last for a model, hardware and
profile, reached through the real review path; its API, page block and pre-filled forms."""

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import event, select
from sqlalchemy.orm import Session

from app.models import Hardware, LlmModel, Profile
from app.records.evidence.known_good import find_known_good
from tests.records.conftest import GLM, accept, post_record


def detail_json(client: TestClient, hardware: str, profile: str = "balanced") -> dict:
    response = client.get(f"/api/models/{GLM}/hardware/{hardware}/profiles/{profile}")
    assert response.status_code == 200, response.text
    return response.json()


def detail_page(client: TestClient, hardware: str, profile: str = "balanced") -> BeautifulSoup:
    response = client.get(f"/models/{GLM}/hardware/{hardware}/profiles/{profile}")
    assert response.status_code == 200, response.text
    return BeautifulSoup(response.text, "html.parser")


def submit(client: TestClient, body: dict, **changes: Any) -> int:
    response = post_record(client, {**body, **changes})
    assert response.status_code == 201, response.text
    return response.json()["id"]


class TestWhichRecordIsKnownGood:
    def test_none_until_a_working_record_is_accepted(
        self, client: TestClient, valid: dict, h200: str
    ) -> None:
        assert detail_json(client, h200)["known_good"] is None
        assert detail_page(client, h200).select_one("#known-good #no-known-good") is not None
        submit(client, valid)  # pending
        failed = submit(client, valid, outcome="load_failure", measurements=[])
        accept(client, failed)
        assert detail_json(client, h200)["known_good"] is None

    def test_the_one_accepted_last_wins_not_the_newest_submitted(
        self, client: TestClient, valid: dict, h200: str
    ) -> None:
        older = submit(client, valid, runtime_version="0.5.10")
        newer = submit(client, valid, runtime_version="0.5.11")
        accept(client, newer)
        assert detail_json(client, h200)["known_good"]["id"] == newer
        accept(client, older)  # submitted first, accepted last
        good = detail_json(client, h200)["known_good"]
        assert good["id"] == older and good["runtime_version"] == "0.5.10"

    def test_a_retraction_falls_back_to_the_one_before(
        self, client: TestClient, valid: dict, h200: str
    ) -> None:
        first = submit(client, valid)
        accept(client, first)
        second = submit(client, valid, runtime_version="0.5.11")
        accept(client, second)
        client.post(
            f"/api/records/{second}/review",
            json={"action": "retract", "reason": "wrong driver noted"},
        )
        assert detail_json(client, h200)["known_good"]["id"] == first

    def test_it_belongs_to_its_own_profile(
        self, client: TestClient, valid: dict, h200: str
    ) -> None:
        accept(client, submit(client, valid))
        assert detail_json(client, h200)["known_good"] is not None
        assert detail_json(client, h200, "speed")["known_good"] is None


def test_the_json_gives_everything_to_rerun_it(client: TestClient, valid: dict, h200: str) -> None:
    record_id = submit(client, valid)
    accept(client, record_id)
    good = detail_json(client, h200)["known_good"]
    assert good["command"] == valid["command"]
    assert good["applied_values"] == valid["applied_values"]
    assert good["environment"] == valid["environment"]
    assert (good["runtime"], good["runtime_version"], good["gpu_count"]) == ("sglang", "0.5.10", 8)
    assert good["accepted_at"].endswith("+00:00")
    new_record = parse_qs(urlsplit(good["new_record_url"]).query)
    assert new_record == {"from_record": [str(record_id)]}
    bench = parse_qs(urlsplit(good["benchmark_url"]).query)
    assert bench["command"] == [valid["command"]] and bench["runtime_version"] == ["0.5.10"]
    assert bench["artifact"] == [valid["artifact"]] and bench["profile"] == ["balanced"]


def test_the_page_block_shows_the_command_with_a_copy_button(
    client: TestClient, valid: dict, h200: str
) -> None:
    record_id = submit(client, valid)
    accept(client, record_id)
    block = detail_page(client, h200).select_one("#known-good")
    assert block.select_one("#known-good-record")["href"].endswith(f"/records/{record_id}")
    assert "0.5.10" in block.select_one("#known-good-runtime").text
    assert block.select_one("#known-good-command button.copy")["data-copy"] == valid["command"]
    assert "16384" in block.select_one("#known-good-applied").text
    assert "580.95.05" in block.select_one("#known-good-environment").text
    bench = parse_qs(urlsplit(block.select_one("#known-good-benchmark")["href"]).query)
    # The page's server address stays; the record's own run fills the rest.
    assert bench["base_url"] == ["http://127.0.0.1:8000/v1"]
    assert bench["command"] == [valid["command"]]


class TestRecordFormFromARecord:
    def test_the_form_is_filled_from_the_record(self, client: TestClient, valid: dict) -> None:
        record_id = submit(client, valid)
        page = BeautifulSoup(
            client.get("/records/new", params={"from_record": record_id}).text, "html.parser"
        )
        assert page.select_one("textarea[name=command]").text == valid["command"]
        assert page.select_one("input[name=runtime_version]")["value"] == "0.5.10"
        assert page.select_one("select[name=runtime] option[selected]")["value"] == "sglang"
        assert page.select_one("select[name=profile] option[selected]")["value"] == "balanced"
        assert page.select_one("input[name='environment.driver']")["value"] == "580.95.05"
        applied = page.select_one("textarea[name=applied_values]").text
        assert '"context": 16384' in applied
        # A new run measures its own figures.
        assert page.select_one("input[name='measurements.0.ttft_ms']").get("value", "") == ""

    def test_a_missing_or_malformed_record_id_is_refused(self, client: TestClient) -> None:
        assert client.get("/records/new", params={"from_record": 999_999}).status_code == 404
        assert client.get("/records/new", params={"from_record": "x"}).status_code == 422
        assert client.get("/records/new", params={"from_record": 0}).status_code == 422


def test_a_record_page_links_to_the_comparison_with_the_known_good(
    client: TestClient, valid: dict
) -> None:
    good = submit(client, valid)
    accept(client, good)
    other = submit(client, valid, runtime_version="0.5.11")
    page = BeautifulSoup(client.get(f"/records/{other}").text, "html.parser")
    link = page.select_one("#compare-known-good")["href"]
    assert parse_qs(urlsplit(link).query) == {"a": [str(good)], "b": [str(other)]}
    own = BeautifulSoup(client.get(f"/records/{good}").text, "html.parser")
    assert own.select_one("#compare-known-good") is None
    assert own.select_one("#is-known-good") is not None


def test_the_lookup_is_one_indexed_query(
    client: TestClient, session: Session, valid: dict, h200: str
) -> None:
    for version in ("0.5.10", "0.5.11", "0.5.12"):
        accept(client, submit(client, valid, runtime_version=version))
    model = session.scalars(select(LlmModel).where(LlmModel.slug == GLM)).one()
    hardware = session.scalars(select(Hardware).where(Hardware.slug == h200)).one()
    profile = session.scalars(select(Profile).where(Profile.slug == "balanced")).one()
    seen: list[tuple[str, Any]] = []

    def remember(_conn, _cursor, statement, parameters, _context, _many) -> None:  # noqa: ANN001
        seen.append((statement, parameters))

    engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", remember)
    try:
        good = find_known_good(session, model, hardware, profile)
    finally:
        event.remove(engine, "before_cursor_execute", remember)
    assert good is not None and good.record.runtime_version == "0.5.12"
    # One lookup finds the record's id; the record itself then loads by its primary key
    # (and one more query, through the verdict's own index, finds sentinel regressions).
    reads = [(s, p) for s, p in seen if re.search(r"\bFROM records\b", s)]
    regressions = [(s, p) for s, p in reads if "records.sentinel_verdict = " in s]
    assert len(regressions) == 1
    reads = [(s, p) for s, p in reads if (s, p) not in regressions]
    lookups = [(s, p) for s, p in reads if "LIMIT" in s]
    assert len(lookups) == 1 and len(reads) == 2
    assert re.search(r"WHERE records\.id = \S+$", reads[1][0].strip())
    statement, parameters = lookups[0]
    connection = session.connection()
    if engine.dialect.name == "sqlite":
        explain = "EXPLAIN QUERY PLAN "
    else:
        # PostgreSQL's planner scans a table this small whatever its indexes; forbid that.
        connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
        explain = "EXPLAIN "
    plan = connection.exec_driver_sql(explain + statement, parameters)
    details = " | ".join(str(row[-1]) for row in plan)
    if engine.dialect.name == "sqlite":
        assert "ix_records_configuration" in details, details
    else:  # either configuration index serves; what matters is no scan of the table
        assert "Index Scan using ix_records_" in details, details
