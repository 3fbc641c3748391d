"""What a calibration says to a person: why a probe failed, and the account of a fit."""

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register

TOO_FEW_POINTS = register(
    "calibrate.too_few_points",
    _l(
        "the probe timed %(points)s decode steps at %(batches)s batch sizes: too few to fit "
        "(at least 3 steps at 2 batch sizes)"
    ),
)
CONTRADICTORY = register(
    "calibrate.contradictory",
    _l(
        "the timings contradict each other: a step at batch %(small_batch)s took "
        "%(small_ms)s ms, slower than at batch %(large_batch)s (%(large_ms)s ms)"
    ),
)
NOISY = register(
    "calibrate.noisy",
    _l(
        "the timings are noise: requests timed at the same batch size and depth differ by "
        "%(spread)s times (typical point), over %(limit)s"
    ),
)
POOR_FIT = register(
    "calibrate.poor_fit",
    _l("the points do not fit the step model: error %(error)s%%, over %(limit)s%%"),
)
FAILED_REQUESTS = register(
    "calibrate.failed_requests", _l("the server answered no probe request: %(errors)s")
)
NO_BANDWIDTH = register(
    "calibrate.no_bandwidth",
    _l("hardware %(hardware)s has no memory bandwidth figure to calibrate against"),
)
UNKNOWN_RUNTIME = register(
    "calibrate.unknown_runtime",
    _l("the server does not say which runtime it is: give --runtime (one of %(known)s)"),
)
UNKNOWN_HARDWARE = register(
    "calibrate.unknown_hardware",
    _l(
        "no hardware '%(slug)s' in the catalog: give its memory and bandwidth to add it "
        "(--memory-gb, --bandwidth-gb-s), or one of %(known)s"
    ),
)
NO_ARTIFACT = register(
    "calibrate.no_artifact", _l("no file of model %(model)s runs on %(runtime)s")
)
# The account of a fit: fitted figures beside the datasheet's.
BANDWIDTH = register(
    "calibrate.bandwidth",
    _l("effective bandwidth %(fitted)s of %(datasheet)s TB/s (%(share)s%%)"),
)
LAYER_TIME = register(
    "calibrate.layer_time", _l("fixed time per layer %(fitted)s µs (shipped %(shipped)s µs)")
)
COMMUNICATION = register(
    "calibrate.communication",
    _l("communication %(fitted)s ms per step on %(gpus)s GPUs (link figures %(shipped)s ms)"),
)
PREFILL = register(
    "calibrate.prefill",
    _l("prefill utilisation %(fitted)s%% of peak (shipped %(low)s-%(high)s%%)"),
)
FIRST_TOKEN = register(
    "calibrate.first_token",
    _l("first token: %(fitted)s ms per request on top of its prefill (shipped %(shipped)s ms)"),
)
FIT_ERROR = register(
    "calibrate.fit_error",
    _l("fit error %(error)s%% on %(points)s decode steps; prefill %(prefill)s"),
)
STORED = register(
    "calibrate.stored",
    _l("calibration stored for %(hardware)s on %(runtime)s: estimates there are now calibrated"),
)
FAILED = register(
    "calibrate.failed", _l("calibration failed for %(hardware)s on %(runtime)s: %(reason)s")
)

REFUSALS = {
    "too_few_points": TOO_FEW_POINTS,
    "noisy": NOISY,
    "contradictory": CONTRADICTORY,
    "poor_fit": POOR_FIT,
    "failed_requests": FAILED_REQUESTS,
}


def refusal_sentence(refusal: dict) -> Sentence:
    """A stored refusal (`{"kind": ..., "figures": {...}}`) as its sentence."""
    return REFUSALS[refusal["kind"]](**refusal.get("figures", {}))


CANNOT_RUN = register(
    "calibrate.cannot_run",
    _l(
        "%(runtime)s does not run on %(platform)s hardware like %(hardware)s (it runs on "
        "%(runs_on)s): nothing was probed"
    ),
)
UNKNOWN_MODEL_SOURCE = register(
    "calibrate.unknown_model_source",
    _l(
        "%(model)s is neither a catalog slug, a Hub repository id (org/name) nor a "
        "config.json file; catalog models: %(known)s"
    ),
)
UNREADABLE_CONFIG = register(
    "calibrate.unreadable_config",
    _l("%(path)s is not a model's config.json: %(reason)s"),
)
UNREADABLE_MODEL = register(
    "calibrate.unreadable_model", _l("could not read model %(model)s: %(reason)s")
)
CANNOT_ESTIMATE = register(
    "calibrate.cannot_estimate",
    _l("model %(model)s cannot be calibrated on this hardware: %(reason)s"),
)
