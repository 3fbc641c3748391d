"""A reported figure is contradicted by the card's roofline, or by an accepted measurement
on the same hardware and route (any profile) far outside it; a close one leaves it be."""

from dataclasses import replace

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.resolve import load_model_inputs
from app.resolve.contradicted import contradiction, decode_roofline
from app.resolve.figures import Evidence, MeasuredPoint, SpeedFigure

GLM = "glm-5.3-flash"
MAC_512 = "mac-studio-m5-ultra-512gb"
MLX_8BIT = ("glm-5.3-flash-mlx-8bit", "mlx-lm")


def reported(low: float, high: float) -> SpeedFigure:
    return SpeedFigure(low, high, Evidence.REPORTED, ())


def test_the_roofline_and_a_measurement_contradict_a_reported_figure(session: Session) -> None:
    inputs = load_model_inputs(session, GLM)
    hardware = CatalogRepository(session).get_hardware(MAC_512)
    route = next(choice for choice, _ in inputs.routes if choice.key == MLX_8BIT)
    assert round(decode_roofline(inputs, hardware, route, 1), 1) == 43.6
    above = contradiction(inputs, hardware, route, 1, reported(81.3, 90.3))
    assert above is not None and above.code == "figure.reported_above_roofline"
    assert contradiction(inputs, hardware, route, 1, reported(30.0, 35.0)) is None

    def measured(decode: float, profile_id: int | None) -> MeasuredPoint:
        return MeasuredPoint(
            record_id=1, hardware_id=hardware.id, profile_id=profile_id,
            artifact_id=route.artifact.id, runtime_id=route.runtime.id, context_length=4096,
            decode_tokens_per_s=decode, ttft_ms=None, peak_memory_gb_per_gpu=None,
        )  # fmt: skip

    slow = replace(inputs, measured=[measured(12.0, None)])
    found = contradiction(slow, hardware, route, 1, reported(30.0, 35.0))
    assert found is not None and found.code == "figure.reported_measured_otherwise"
    assert found.params["low"] == found.params["high"] == 12.0
    close = replace(inputs, measured=[measured(33.0, None)])
    assert contradiction(close, hardware, route, 1, reported(30.0, 35.0)) is None
