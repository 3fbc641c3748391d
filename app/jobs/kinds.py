"""The kinds of job the queue runs, looked up by the name each job stores.

A kind says how a worker runs a claimed job and how the dashboard stores what it found;
the worker, the leases and the pages look the kind up and never ask which one it is. The
benchmark kind is the queue's own (app/jobs/benchmark.py); calibrations and sentinel
re-checks register theirs from their packages, which build on the queue, and
`app.job_kinds` imports every one of them for the app and the CLI.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy.orm import Session

from app.errors import Conflict, ServebookError
from app.models import BenchJob

if TYPE_CHECKING:
    from app.jobs.leases import Claim

Progress = Callable[[str, int, int], None]


class Runner(Protocol):
    """What a kind reads of the worker that runs it."""

    allowed_hosts: list[str]
    run: Callable[..., Any]

    def api_key_for(self, claim: "Claim") -> str | None: ...


class JobKind(Protocol):
    name: str  # stored on the job (`bench_jobs.kind`)
    # Where a remote worker posts the outcome, under /api/worker/jobs/{id}/.
    outcome_path: str
    # The page that gives a job of this kind its account; None: the job page itself.
    page: str | None

    def run(self, runner: Runner, claim: "Claim", progress: Progress) -> Any:
        """On the worker: run the claimed job, its outcome for `finish`."""
        ...

    def outcome_body(self, outcome: Any) -> dict[str, Any]:
        """The outcome as the worker API's body carries it, beside the lease token."""
        ...

    def finish(self, session: Session, job: BenchJob, lease_token: str, outcome: Any) -> Any:
        """On the dashboard: store the outcome and the job's success together, or neither."""
        ...


KINDS: dict[str, JobKind] = {}


class UnknownKind(ServebookError):
    """A job of a kind this process has not registered: it cannot run or finish it."""


class WrongOutcome(Conflict):
    """An outcome posted where another kind's goes: the job's kind is what it contradicts."""


def register(kind: JobKind) -> JobKind:
    KINDS[kind.name] = kind
    return kind


def kind_named(name: str) -> JobKind:
    try:
        return KINDS[name]
    except KeyError:
        known = ", ".join(sorted(KINDS)) or "none"
        raise UnknownKind(f"no job kind {name!r} in this process (it knows {known})") from None


def kind_of(job: BenchJob, outcome_path: str | None = None) -> JobKind:
    """The job's kind; with `outcome_path`, refused unless outcomes of that kind go there."""
    kind = kind_named(job.kind)
    if outcome_path is not None and kind.outcome_path != outcome_path:
        raise WrongOutcome(
            f"job {job.id} is a {kind.name} job: its outcome goes to "
            f"/api/worker/jobs/{job.id}/{kind.outcome_path}"
        )
    return kind
