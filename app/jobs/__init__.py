"""The job queue: benchmark, calibration and sentinel jobs queued from the pages, the API
and the CLI, leased to workers (in the app, beside it, or remote over the worker API), run,
and finished into records. The client that measures a server is `app.bench`.

May import the client, the records and the jobs' own kinds (`app.calibrate`,
`app.sentinel`); never the resolution, the recipe pages or the plan."""
