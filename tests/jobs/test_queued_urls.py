"""A queued job's server URL is written as `/openapi.json` states it: the queue refuses what
the served pattern refuses (a URL another spelling of loopback, a query, a port past 65,535),
so a tool that reads the schema and the server agree, and takes every port a real server
listens on (SGLang's 30000)."""

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.jobs.test_bench_jobs import job_body


def served_pattern(client: TestClient) -> str:
    schema = client.get("/openapi.json").json()
    body = schema["paths"]["/api/benchmarks"]["post"]["requestBody"]["content"]
    return body["application/json"]["schema"]["properties"]["base_url"]["pattern"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:30000/v1",  # SGLang's default port
        "http://localhost:65535/v1",
        "https://[::1]:8443/v1",
        "http://127.0.0.1:8000/v1/*",  # a sub-delimiter RFC 3986 allows in a path
        "http://127.0.0.1:8000/%7Eme/v1",
    ],
)
def test_a_url_the_document_admits_is_queued(client: TestClient, url: str) -> None:
    assert re.fullmatch(served_pattern(client), url)
    response = client.post("/api/benchmarks", json=job_body(url))
    assert response.status_code == 202, response.text


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost.:8000/v1",  # another spelling of loopback, which the CLI takes
        "http://LOCALHOST:8000/v1",
        "http://127.0.0.2:8000/v1",
        "http://127.0.0.1:65536/v1",
        "http://127.0.0.1:8000/v1?key=1",
        "http://127.0.0.1:8000/v1#top",
        "http://me@127.0.0.1:8000/v1",
        "http://127.0.0.1:8000/v 1",
    ],
)
def test_a_url_the_document_refuses_is_refused_naming_the_field(
    client: TestClient, url: str
) -> None:
    assert not re.fullmatch(served_pattern(client), url)
    response = client.post("/api/benchmarks", json=job_body(url))
    assert response.status_code == 422, response.text
    errors: list[dict[str, Any]] = response.json()["errors"]
    assert [e["field"] for e in errors] == ["base_url"]
