"""A refusal is bounded whatever the body: at most 50 errors, then one saying how many more
there were; a field's name and message clipped, so the answer stays under 64 KB; a body of
hundreds of thousands of keys refused before anything is built from it."""

import json

from fastapi.testclient import TestClient

MAX_BODY = 64 * 1024
MAX_ERRORS = 50


def unknown_keys(count: int, **known: object) -> bytes:
    keys = ",".join(f'"k{i:06d}":{i % 10}' for i in range(count))
    return ("{" + json.dumps(known)[1:-1] + ("," if known else "") + keys + "}").encode()


def post(client: TestClient, path: str, body: bytes):  # noqa: ANN201
    return client.post(path, content=body, headers={"Content-Type": "application/json"})


def test_the_estimate_lists_fifty_errors_then_how_many_more(client: TestClient) -> None:
    for path in ("/api/estimate", "/api/plan"):
        answer = post(client, path, unknown_keys(20_000))
        assert answer.status_code == 422, answer.text[:300]
        assert len(answer.content) < MAX_BODY
        errors = answer.json()["errors"]
        assert len(errors) == MAX_ERRORS + 1
        assert "more errors not listed; the first 50 are above" in errors["more"]


def test_a_record_lists_fifty_errors_then_how_many_more(client: TestClient) -> None:
    answer = post(client, "/api/records", unknown_keys(20_000))
    assert answer.status_code == 422, answer.text[:300]
    assert len(answer.content) < MAX_BODY
    errors = answer.json()["errors"]
    assert len(errors) == MAX_ERRORS + 1
    more = errors[-1]
    assert (more["field"], more["code"]) == ("body", "input.more_errors")
    assert more["params"]["listed"] == MAX_ERRORS
    assert more["params"]["more"] > 19_900


def test_long_field_names_are_clipped(client: TestClient) -> None:
    names = {("x" * 50_000) + str(i): 1 for i in range(5)}
    for path in ("/api/records", "/api/estimate"):
        answer = post(client, path, json.dumps(names).encode())
        assert answer.status_code == 422
        assert len(answer.content) < MAX_BODY


def test_a_body_of_too_many_keys_is_refused_before_it_is_read(client: TestClient) -> None:
    answer = post(client, "/api/estimate", unknown_keys(409_090))
    assert answer.status_code == 422
    assert len(answer.content) < 1024
    [error] = answer.json()["errors"]
    assert "keys; at most 250,000 are accepted" in error["message"]
    one_object = {"model": {f"k{i}": 1 for i in range(100_001)}}
    answer = post(client, "/api/records", json.dumps(one_object).encode())
    assert answer.status_code == 422
    assert "at most 100,000 are accepted" in answer.text
