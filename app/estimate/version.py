"""The estimator's version: it names the figures a record was compared with and the rows of
the accuracy history, so a later change to the speed model never rewrites what an earlier
one said. Move it with every change to a coefficient, a range or the step model."""

ESTIMATOR_VERSION = "2026.12.8"
