"""The catalog: models, model files, runtimes, hardware and profiles, loaded from
`seed_data/` with their sources, queried for the pages, and stated in the API's schema.

May import the estimator's inputs and the ORM models; never the resolution, the pages or
the jobs."""
