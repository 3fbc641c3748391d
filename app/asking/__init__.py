"""Asking the one question: a model, hardware, runtime, profile, context, load, request
shape and evidence, read from the API, the forms, the CLI and the plan into one typed
`Question`, resolved once (`app.resolve`), with every refusal by field.

The readers of described models and cards (config.json, safetensors headers, GGUF files,
Hub repositories, GPU names) live here too: they turn what a person has into the catalog's
shape, so a described question resolves as a catalog one does.
"""
