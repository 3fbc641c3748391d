"""A reported figure is someone else's claim: it is marked contradicted where the card's
memory bandwidth cannot deliver it (the roofline: every active weight read once per token)
or where an accepted measurement on the same hardware and route, under any profile, is far
from it. The figure stays shown, with the mark and the reason, wherever it appears."""

import msgspec

from app.estimate.memory.weights import active_weight_bytes, weights_bytes
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register
from app.models import Hardware
from app.resolve.figures import Evidence, SpeedFigure, medians_by_context
from app.resolve.inputs import ModelInputs, RouteChoice

# A measurement this far outside the reported range (either way) contradicts it.
MEASURED_TOLERANCE = 1.25

ABOVE_ROOFLINE = register(
    "figure.reported_above_roofline",
    _l(
        "contradicted: %(hardware)s's memory bandwidth allows at most %(roofline)s tok/s for "
        "the active weights of %(artifact)s, below the %(low)s reported"
    ),
)
MEASURED_OTHERWISE = register(
    "figure.reported_measured_otherwise",
    _l(
        "contradicted: accepted records measured %(low)s ~ %(high)s tok/s with %(runtime)s on "
        "this hardware"
    ),
)


def decode_roofline(inputs: ModelInputs, hardware: Hardware, route: RouteChoice, tp: int) -> float:
    """One request's decode ceiling in tok/s; 0 when the card's bandwidth is unknown."""
    bandwidth = hardware.bandwidth_gb_s_per_gpu
    if not bandwidth:
        return 0.0
    model, artifact = inputs.spec, inputs.route_by_key[route.key].artifact
    active = active_weight_bytes(model, artifact, weights_bytes(model, artifact))
    return bandwidth * 1e9 * tp / active


def contradiction(
    inputs: ModelInputs, hardware: Hardware, route: RouteChoice, tp: int, figure: SpeedFigure
) -> Sentence | None:
    """Why a reported figure cannot be taken as it is, or None."""
    roofline = decode_roofline(inputs, hardware, route, tp)
    if roofline and figure.low > roofline:
        return ABOVE_ROOFLINE(
            hardware=hardware.name,
            roofline=round(roofline, 1),
            artifact=route.artifact.name,
            low=figure.low,
        )
    points = [
        p
        for p in inputs.measured
        if p.hardware_id == hardware.id
        and (p.artifact_id, p.runtime_id) == (route.artifact.id, route.runtime.id)
    ]
    speeds = [m.decode_tokens_per_s for m in medians_by_context(points) if m.decode_tokens_per_s]
    if not speeds:
        return None
    low, high = min(speeds), max(speeds)
    if high * MEASURED_TOLERANCE < figure.low or low > figure.high * MEASURED_TOLERANCE:
        return MEASURED_OTHERWISE(low=low, high=high, runtime=route.runtime.name)
    return None


def checked(
    inputs: ModelInputs,
    hardware: Hardware,
    route: RouteChoice,
    tp: int,
    figure: SpeedFigure | None,
) -> SpeedFigure | None:
    """The figure, marked when it is a reported one that the roofline or a measurement
    contradicts."""
    if figure is None or figure.basis != Evidence.REPORTED:
        return figure
    why = contradiction(inputs, hardware, route, tp, figure)
    return figure if why is None else msgspec.structs.replace(figure, contradicted=why)
