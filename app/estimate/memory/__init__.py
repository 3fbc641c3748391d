"""Memory per GPU: weight bytes (`weights`), the KV cache (`kv`) and as each runtime's
paged pool holds it per request (`capacity`), what a runtime keeps for itself (`budget`),
and the prepared job every memory figure is summed from (`breakdown`).

Imports the inputs and the estimator's basics; never speed or ranges, which read it."""
