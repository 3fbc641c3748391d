"""What goes into an estimate, checked: the model, its file, the runtime (and its family),
the hardware and the plan (`specs`); what a model's attention fields must hold
(`attention`); their checks with every default resolved (`checked_plan`); a Hugging Face
config.json read into model fields (`hf_config`, its schema in `hf_config_schema`); and the
quant table (`quants`).

Imports only the estimator's basics (`basis`, `errors`, `messages`, `units`): memory,
speed and ranges read these, never the other way round."""
