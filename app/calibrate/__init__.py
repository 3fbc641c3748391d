"""Calibration: a short probe of the user's own server fits the step model's coefficients for
its hardware and runtime (`servebook calibrate`, or a job from a detail page)."""
