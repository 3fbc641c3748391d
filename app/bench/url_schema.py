"""The OpenAPI statement of which server URLs a benchmark may name: http or https on a
loopback name or address, or a host SERVEBOOK_BENCH_ALLOWED_HOSTS lists; any host when the
job is pinned to a worker label (that worker checks its own list). A field marked with
`x-bench-url` gets the pattern for the hosts the served settings allow, so a URL valid by
the served document is one check_url_allowed admits; where the body may name a worker
label, `x-pattern-unless` gives the pattern that holds when it names none."""

import re
from typing import Any

BENCH_URL_KEY = "x-bench-url"
WORKER_LABEL = "worker_label"
LOOPBACK = ("localhost", r"127\.0\.0\.1", r"\[::1\]")
# A DNS name of short labels; a port below 10,000; a path of unreserved characters.
ANY_HOST = r"[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?)*"
PORT_AND_PATH = r"(?::[1-9][0-9]{0,3})?(?:/[A-Za-z0-9._~-]*)*"


def url_pattern(hosts: str) -> str:
    return f"^https?://(?:{hosts}){PORT_AND_PATH}$"


def bench_url_field() -> dict[str, Any]:
    """A field's `json_schema_extra`: a URL the benchmark client will connect to."""
    return {BENCH_URL_KEY: True}


def state_bench_urls(node: Any, allowed_hosts: list[str]) -> None:
    """Every object under `node` with a marked URL field says which URLs it takes."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            state_object(node, properties, allowed_hosts)
        for value in node.values():
            state_bench_urls(value, allowed_hosts)
    elif isinstance(node, list):
        for value in node:
            state_bench_urls(value, allowed_hosts)


def state_object(schema: dict[str, Any], properties: dict[str, Any], allowed: list[str]) -> None:
    # (A map of property schemas may itself name a property "properties": only schemas count.)
    marked = [
        name
        for name, field in properties.items()
        if isinstance(field, dict) and field.pop(BENCH_URL_KEY, False)
    ]
    if not marked:
        return
    hosts = [*LOOPBACK, *(re.escape(h.lower()) for h in allowed)]
    named = url_pattern("|".join(hosts))
    anywhere = url_pattern("|".join([*hosts, ANY_HOST]))
    # A URL that may be left out may be blank too: a blank one is none.
    blank = {name: "anyOf" in properties[name] for name in marked}
    for name in marked:
        field = properties[name]
        branch = next((b for b in field.get("anyOf", []) if b.get("type") == "string"), field)
        if WORKER_LABEL not in properties:
            branch["pattern"] = or_blank(named, blank[name])
            continue
        branch["pattern"] = or_blank(anywhere, blank[name])
        # Without a worker label the dashboard's own list applies. Stated in an extension:
        # a branch for each case, times the catalog's branches, grows past what a
        # generator expands.
        field["x-pattern-unless"] = {"field": WORKER_LABEL, "pattern": or_blank(named, blank[name])}


def or_blank(pattern: str, blank: bool) -> str:
    return f"^$|{pattern}" if blank else pattern
