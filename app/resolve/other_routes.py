"""Accepted measurements of a profile on a hardware through a route other than the one the
recipe recommends: a working run of the page's second command (vLLM beside SGLang, say)
counts for the profile, and its own figures are shown beside the recommended route's."""

from collections import defaultdict

import msgspec

from app.models import Hardware, Profile
from app.resolve.figures import ContextMedian, SpeedFigure, measured_speed, medians_by_context
from app.resolve.inputs import ModelInputs, RouteChoice


class RouteMeasured(msgspec.Struct, frozen=True):
    """One other route's accepted single-request figures for this profile and hardware."""

    artifact: str  # slug
    artifact_name: str
    runtime: str  # slug
    runtime_name: str
    speed: SpeedFigure | None
    measured: tuple[ContextMedian, ...]

    def as_json(self) -> dict:
        return {
            "artifact": self.artifact,
            "runtime": self.runtime,
            "token_generation": self.speed.as_json() if self.speed else None,
            "measured": [msgspec.structs.asdict(point) for point in self.measured],
        }


def measured_on_other_routes(
    inputs: ModelInputs, hardware: Hardware, profile: Profile, route: RouteChoice | None
) -> tuple[RouteMeasured, ...]:
    """Per other route with accepted points of this profile here, its medians and speed."""
    by_route = defaultdict(list)
    for point in inputs.measured:
        if point.hardware_id != hardware.id or point.profile_id != profile.id:
            continue
        if route is not None and (point.artifact_id, point.runtime_id) == (
            route.artifact.id,
            route.runtime.id,
        ):
            continue
        by_route[(point.artifact_id, point.runtime_id)].append(point)
    if not by_route:
        return ()
    artifacts = {a.id: a for a in inputs.model.artifacts}
    runtimes = {r.id: r for r in inputs.runtimes}
    found = []
    for (artifact_id, runtime_id), points in sorted(by_route.items()):
        artifact, runtime = artifacts[artifact_id], runtimes[runtime_id]
        medians = tuple(medians_by_context(points))
        found.append(
            RouteMeasured(
                artifact.slug,
                artifact.name,
                runtime.slug,
                runtime.name,
                measured_speed(medians),
                medians,
            )  # fmt: skip
        )
    return tuple(found)
