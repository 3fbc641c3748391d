"""This machine's names are connected to at their loopback addresses, never resolved: in
this sandbox the resolver knows `localhost` only, so `localhost.` or `localhost.localdomain`
reached a resolver (and, on a real network, DNS) before, and answer now."""

import pytest

from app.bench.transport.hosts import HostNotAllowedError, check_url_allowed, loopback_addresses
from tests.jobs.test_bench_cli import bench, database  # noqa: F401 (fixture)
from tests.jobs.test_bench_jobs import FAST


@pytest.mark.parametrize("name", ["localhost.", "LOCALHOST.localdomain", "localhost.localdomain."])
def test_a_loopback_alias_is_benchmarked_without_a_lookup(fake_server: str, name: str) -> None:
    result = bench(fake_server.replace("127.0.0.1", name), FAST)
    assert result.exit_code == 0, result.output
    assert "outcome: ok" in result.output


@pytest.mark.parametrize(
    ("name", "addresses"),
    [
        ("localhost", ("127.0.0.1", "::1")),
        ("Localhost.", ("127.0.0.1", "::1")),
        ("localhost.localdomain", ("127.0.0.1", "::1")),
        ("ip6-localhost", ("::1",)),
        ("[ip6-loopback]", ("::1",)),
        ("example.com", ()),
        ("127.0.0.1", ()),
    ],
)
def test_loopback_names_stand_for_fixed_addresses(name: str, addresses: tuple) -> None:
    assert loopback_addresses(name) == addresses


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost.example.com/v1",
        "http://localhost..:8000/v1",
        "http://127.0.0.1.nip.io/v1",
        "http://localhostx/v1",
    ],
)
def test_names_that_only_look_local_are_refused(url: str) -> None:
    with pytest.raises(HostNotAllowedError):
        check_url_allowed(url)
