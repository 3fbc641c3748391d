"""Speed: the step-time model (`step`), its coefficients (`coefficients`, with the
llama.cpp family's calibrated constants in `llama_constants`), a job's speed model
(`model`), speed at a load (`load`), speculative decoding (`speculative`), partial offload
(`offload`) and the figures a measured point is compared with (`scored`).

Imports the inputs, memory and ranges (a load's figures carry their class's spread); never
the estimator's top (`estimator`, `fit`, `catalog_pass`, `calibration`), which builds on it."""
