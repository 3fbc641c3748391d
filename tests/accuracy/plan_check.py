"""The capacity planner against published serving runs under load (`make plan-accuracy`).

Each row of `plan_checks.yaml` is one run: a model on one replica of N GPUs, a prompt and
output length, and a concurrency, with the per-request decode speed measured there. The
plan is asked as a user would ask it (`POST /api/plan` on the real app, over a freshly
migrated and seeded SQLite file): the run's model, `[{"gpu": NAME, "count": N}]`, the
lengths, `users` = the concurrency, the run's runtime and `evidence: "ignore"`, twice:

  (a) `min_decode_tokens_per_s` = 0.75 x the measured speed: the run did better than that
      on one replica, so the plan should meet it with one (an option `meets` with
      `replicas == 1`);
  (b) `min_decode_tokens_per_s` = 1.5 x the measured speed: the run did not reach that, so
      the plan should not meet it with one replica.

Prints, per publisher and overall: runs, runs answered, the share meeting (a), the share
refusing (b), and the median ratio measured / the middle of the plan's per-request decode
band at its concurrency. Nothing is fitted on these rows: every publisher is a checking
one, and none is among those `servers.yaml` cites. A run the app cannot answer (a 422, an
unknown GPU, no option) counts as a failure in (a) and is listed with the reason.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

PLAN_CHECKS = Path(__file__).with_name("plan_checks.yaml")
SERVERS = Path(__file__).with_name("servers.yaml")
MEET_FACTOR = 0.75  # (a): the plan should meet this share of the measured speed
REFUSE_FACTOR = 1.5  # (b): and refuse this multiple of it, both on one replica
TARGET = 0.70  # the share of runs each of (a) and (b) should reach


@dataclass(frozen=True)
class PlanCheck:
    """One published run under load and the plan request for it."""

    source: str
    publisher: str
    label: str
    model: str | dict[str, Any]  # a catalog slug, or a description as /api/estimate takes
    gpu: str
    gpus: int
    memory_gb: float | None
    prompt: int
    output: int
    concurrency: int
    decode: float  # measured tokens/s per request
    decode_basis: str  # how the speed was read from the source
    runtime: str | None = None  # the runtime the run served with: the plan is asked on it

    def body(self, min_decode: float) -> dict[str, Any]:
        """The plan request for this run at a least per-request decode speed."""
        hardware: dict[str, Any] = {"gpu": self.gpu, "count": self.gpus}
        if self.memory_gb is not None:
            hardware["memory_gb"] = self.memory_gb
        return {
            "model": self.model,
            "hardware": [hardware],
            "prompt_tokens": self.prompt,
            "output_tokens": self.output,
            "users": self.concurrency,
            "min_decode_tokens_per_s": round(min_decode, 3),
            "evidence": "ignore",
            **({"runtime": self.runtime} if self.runtime else {}),
        }


@dataclass(frozen=True)
class CheckOutcome:
    check: PlanCheck
    answered: bool
    reason: str | None  # why the plan gave no answer
    meets_low: bool  # (a) met with one replica
    refuses_high: bool  # (b) not met with one replica
    estimate: float | None  # the middle of the decode band, tokens/s per request
    estimate_at: int | None  # the concurrency per replica that band is for
    replicas_low: int | None  # replicas of the first option in answer (a)
    one_replica_limit: str | None = None  # what keeps (a) off one replica, as the plan says
    runtime: str | None = None  # the runtime the plan's option for (a) serves with

    @property
    def ratio(self) -> float | None:
        if not self.estimate:
            return None
        return self.check.decode / self.estimate


@cache
def _data(path: Path = PLAN_CHECKS) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def _publishers_in(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "publisher" and isinstance(value, str):
                yield value
            else:
                yield from _publishers_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from _publishers_in(item)


@cache
def cited_publishers() -> frozenset[str]:
    """Every publisher `servers.yaml` already cites: its fitting ones and every row's."""
    data = yaml.safe_load(SERVERS.read_text())
    return frozenset({*data.get("fitting_publishers", []), *_publishers_in(data)})


def measured_decode(row: dict[str, Any]) -> tuple[float, str]:
    """The run's per-request decode speed and how it was read: 1000 / mean TPOT where the
    source gives it, else 1000 / mean ITL, else the per-request speed it reports."""
    if row.get("tpot_ms"):
        return 1000 / row["tpot_ms"], "1000/mean TPOT"
    if row.get("itl_ms"):
        return 1000 / row["itl_ms"], "1000/mean ITL"
    if row.get("decode_tokens_per_s_per_request"):
        return float(row["decode_tokens_per_s_per_request"]), "per-request speed as reported"
    raise ValueError(f"{row.get('source')}: no TPOT, ITL or per-request speed")


def _model(models: dict[str, Any], name: str) -> str | dict[str, Any]:
    entry = models[name]
    if "slug" in entry:
        return entry["slug"]
    return dict(entry["describe"])


def checks(path: Path = PLAN_CHECKS) -> list[PlanCheck]:
    """The rows of `plan_checks.yaml` as plan checks."""
    data = _data(path)
    models = data["models"]
    out = []
    for row in data["rows"]:
        decode, basis = measured_decode(row)
        out.append(
            PlanCheck(
                source=row["source"],
                publisher=row["publisher"],
                label=(
                    f"{row['model']} {row['gpus']}x {row['gpu']} {row['runtime']} "
                    f"c={row['concurrency']} {row['input_tokens']}/{row['output_tokens']}"
                ),
                model=_model(models, row["model"]),
                gpu=row["gpu"],
                gpus=row["gpus"],
                memory_gb=row.get("memory_gb"),
                prompt=row["input_tokens"],
                output=row["output_tokens"],
                concurrency=row["concurrency"],
                decode=decode,
                decode_basis=basis,
                runtime=row.get("runtime"),
            )
        )
    return out


@contextmanager
def app_client() -> Iterator[Any]:
    """The real app over a freshly migrated and seeded SQLite file in a temp folder."""
    from fastapi.testclient import TestClient

    from app.catalog.seed import seed_catalog
    from app.catalog.seed_schema import load_catalog
    from app.config import PROJECT_ROOT, Settings
    from app.db import session_scope, upgrade_database
    from app.main import create_app

    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        settings = Settings(database_url=f"sqlite:///{folder}/plan_check.db", run_worker=False)
        upgrade_database(settings)
        with session_scope(settings) as session:
            seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
        with TestClient(create_app(settings)) as client:
            yield client


def _one_replica_meets(plan: dict[str, Any]) -> bool:
    return any(o["meets"] and o["replicas"] == 1 for o in plan["options"])


def _refusal(response: Any) -> str:
    try:
        detail = response.json()
    except ValueError:
        detail = response.text
    text = str(detail)
    return f"HTTP {response.status_code}: {text[:300]}"


def outcome(client: Any, check: PlanCheck) -> CheckOutcome:
    """The plan at 0.75x and 1.5x the run's speed, as `POST /api/plan` answers them."""
    low = client.post("/api/plan", json=check.body(MEET_FACTOR * check.decode))
    if low.status_code != 200:
        return CheckOutcome(check, False, _refusal(low), False, False, None, None, None)
    plan = low.json()
    if not plan["options"]:
        return CheckOutcome(
            check, False, "no option for this hardware", False, False, None, None, None
        )
    high = client.post("/api/plan", json=check.body(REFUSE_FACTOR * check.decode))
    # A speed no single request reaches is refused outright (a 422 naming the speed): no
    # replica, one or many, carries it.
    beyond_one_request = high.status_code == 422 and "min_decode_tokens_per_s" in high.json().get(
        "errors", {}
    )
    refuses = beyond_one_request or (
        high.status_code == 200 and not _one_replica_meets(high.json())
    )
    # The figure at the run's own load: the one-replica option where there is one.
    options = plan["options"]
    option = next((o for o in options if o["replicas"] == 1), options[0])
    band = option["decode_tokens_per_s"]
    estimate = (band["low"] + band["high"]) / 2 if band else None
    reason = None if band else "no decode figure"
    if high.status_code != 200 and not beyond_one_request:
        reason = f"(b) {_refusal(high)}"
    return CheckOutcome(
        check,
        True,
        reason,
        _one_replica_meets(plan),
        refuses,
        estimate,
        option["concurrency_per_replica"],
        options[0]["replicas"],
        options[0].get("one_replica_limited_by"),
        option.get("runtime"),
    )


def run(rows: Iterable[PlanCheck]) -> list[CheckOutcome]:
    with app_client() as client:
        return [outcome(client, check) for check in rows]


@dataclass(frozen=True)
class Summary:
    runs: int
    answered: int
    meets: float  # share of runs meeting (a); an unanswered run fails it
    refuses: float  # share of answered runs refusing (b)
    median_ratio: float | None


def summarize(outcomes: list[CheckOutcome]) -> Summary:
    answered = [o for o in outcomes if o.answered]
    ratios = [r for o in answered if (r := o.ratio) is not None]
    return Summary(
        runs=len(outcomes),
        answered=len(answered),
        meets=sum(o.meets_low for o in outcomes) / len(outcomes) if outcomes else 0.0,
        refuses=sum(o.refuses_high for o in answered) / len(answered) if answered else 0.0,
        median_ratio=statistics.median(ratios) if ratios else None,
    )


def _line(label: str, outcomes: list[CheckOutcome]) -> str:
    s = summarize(outcomes)
    ratio = f"{s.median_ratio:5.2f}" if s.median_ratio is not None else "  n/a"
    return (
        f"  {label[:46]:<46} runs {s.runs:>3}  answered {s.answered:>3}  "
        f"meets 0.75x {s.meets:6.1%}  refuses 1.5x {s.refuses:6.1%}  "
        f"median measured/estimate {ratio}"
    )


def _segment(check: PlanCheck) -> str:
    return check.label.split(" c=")[0]


def report(outcomes: list[CheckOutcome]) -> None:
    print(
        f"Plan checks against published runs under load (target: each share >= {TARGET:.0%};"
        " one replica of the run's GPUs, users = its concurrency)"
    )
    print(_line("all", outcomes))
    print("By publisher (nothing is fitted on these rows):")
    for publisher in sorted({o.check.publisher for o in outcomes}):
        print(_line(publisher, [o for o in outcomes if o.check.publisher == publisher]))
    print("By model and hardware:")
    for segment in sorted({_segment(o.check) for o in outcomes}):
        print(_line(segment, [o for o in outcomes if _segment(o.check) == segment]))
    print(
        "Every run (measured tok/s per request; the plan's middle at its concurrency per replica"
        " and runtime; a; b):"
    )
    for o in outcomes:
        c = o.check
        estimate = f"{o.estimate:7.1f}@{o.estimate_at}" if o.estimate else "      -"
        estimate += f" {o.runtime}" if o.runtime else ""
        if not o.answered:
            flags = "FAILS unanswered"
        else:
            low = "meets" if o.meets_low else "FAILS"
            flags = f"{low} {'refuses' if o.refuses_high else 'MEETS'}"
        if o.answered and not o.meets_low and o.one_replica_limit:
            flags += f" (one replica limited by {o.one_replica_limit})"
        print(f"  {c.label[:70]:<70} measured {c.decode:7.1f}  estimate {estimate:<19} {flags}")
    unanswered = [o for o in outcomes if not o.answered]
    if unanswered:
        print("Not answered (counted as failing a):")
        for o in unanswered:
            print(f"  {o.check.label}: {o.reason}")


def main() -> int:
    outcomes = run(checks())
    report(outcomes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
