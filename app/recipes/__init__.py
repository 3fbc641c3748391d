"""The recipe pages and their JSON: the model list, a model's fit table, a profile's detail
page with its launch command and evidence, the estimate page, and the flat answer of
`POST /api/estimate`. Every figure comes resolved from `app.asking` and `app.resolve`.

May import the resolution, asking, the plan's figures and the records; never the jobs."""
