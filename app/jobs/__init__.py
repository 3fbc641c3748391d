"""The job queue: benchmark, calibration and sentinel jobs queued from the pages, the API
and the CLI, leased to workers (in the app, beside it, or remote over the worker API), run,
and finished into records. The client that measures a server is `app.bench`.

Each job names its kind, looked up in `kinds.py`; the benchmark kind is the queue's own,
and `app.calibrate` and `app.sentinel` register theirs on top of the queue. May import the
client and the records; never the kinds built on it, the resolution, the recipe pages or
the plan."""
