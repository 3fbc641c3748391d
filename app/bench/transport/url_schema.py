"""The OpenAPI statement of which server URLs a benchmark may name: http or https on a
loopback name or address, or a host SERVEBOOK_BENCH_ALLOWED_HOSTS lists; for a job pinned to
a worker label, also the hosts SERVEBOOK_BENCH_WORKER_HOSTS lists for that label (the
worker checks its own list again). A field marked with `x-bench-url` gets the pattern for
the hosts the served settings allow, so a URL valid by the served document is one the host
check admits. The label's hosts are stated with standard keywords: the field's pattern
admits every configured host, and one `if`/`then` per label (in `allOf`) narrows it to the
hosts of the label the body names, or to the dashboard's list when it names none."""

import re
from typing import Any

BENCH_URL_KEY = "x-bench-url"
WORKER_LABEL = "worker_label"
LOOPBACK = ("localhost", r"127\.0\.0\.1", r"\[::1\]")
# A port from 1 to 65,535 (SGLang listens on 30000); a path of the characters RFC 3986 allows
# in one (percent-encoded bytes too), and no user, query or fragment.
PORT = (
    r"(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}"
    r"|655[0-2][0-9]|6553[0-5]))?"
)
PATH = r"(?:/(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})*)*"
PORT_AND_PATH = PORT + PATH


def url_pattern(hosts: str) -> str:
    return f"^https?://(?:{hosts}){PORT_AND_PATH}$"


def written_as_stated(url: str, hosts: list[str]) -> bool:
    """Whether `url` is written as the served document states a benchmark URL for these
    allowed hosts: the queue refuses any other, so the document is the rule it holds to."""
    return re.fullmatch(url_pattern(hosts_pattern(hosts)), url) is not None


def bench_url_field() -> dict[str, Any]:
    """A field's `json_schema_extra`: a URL the benchmark client will connect to."""
    return {BENCH_URL_KEY: True}


def state_bench_urls(
    node: Any, allowed_hosts: list[str], label_hosts: dict[str, list[str]] | None = None
) -> None:
    """Every object under `node` with a marked URL field says which URLs it takes."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            state_object(node, properties, allowed_hosts, label_hosts or {})
        for value in list(node.values()):
            state_bench_urls(value, allowed_hosts, label_hosts)
    elif isinstance(node, list):
        for value in node:
            state_bench_urls(value, allowed_hosts, label_hosts)


def hosts_pattern(hosts: list[str]) -> str:
    return "|".join([*LOOPBACK, *(re.escape(h.lower()) for h in hosts)])


def state_object(
    schema: dict[str, Any],
    properties: dict[str, Any],
    allowed: list[str],
    label_hosts: dict[str, list[str]],
) -> None:
    # (A map of property schemas may itself name a property "properties": only schemas count.)
    marked = [
        name
        for name, field in properties.items()
        if isinstance(field, dict) and field.pop(BENCH_URL_KEY, False)
    ]
    if not marked:
        return
    named = url_pattern(hosts_pattern(allowed))
    labels = {label: hosts for label, hosts in label_hosts.items() if hosts}
    if WORKER_LABEL not in properties:
        labels = {}
    every = url_pattern(hosts_pattern([*allowed, *(h for hs in labels.values() for h in hs)]))
    # A URL that may be left out may be blank too: a blank one is none.
    blank = {name: "anyOf" in properties[name] for name in marked}
    for name in marked:
        string_branch(properties[name])["pattern"] = or_blank(every, blank[name])
    if not labels:
        return
    # Each label narrows the URLs to its own list; no label, to the dashboard's.
    cases = [
        (
            {"properties": {WORKER_LABEL: {"const": label}}, "required": [WORKER_LABEL]},
            url_pattern(hosts_pattern([*allowed, *hosts])),
        )
        for label, hosts in labels.items()
    ]
    # No label, or one with no hosts of its own: the dashboard's list.
    some_label = {"properties": {WORKER_LABEL: {"enum": list(labels)}}, "required": [WORKER_LABEL]}
    cases.append(({"not": some_label}, named))
    narrowed = schema.setdefault("allOf", [])
    for when, pattern in cases:
        then = {
            name: {
                "anyOf": [
                    {"type": "null"},
                    {"type": "string", "pattern": or_blank(pattern, blank[name])},
                ]
            }
            if blank[name]
            else {"type": "string", "pattern": pattern}
            for name in marked
        }
        narrowed.append({"if": when, "then": {"properties": then}})


def string_branch(field: dict[str, Any]) -> dict[str, Any]:
    return next((b for b in field.get("anyOf", []) if b.get("type") == "string"), field)


def or_blank(pattern: str, blank: bool) -> str:
    return f"^$|{pattern}" if blank else pattern
