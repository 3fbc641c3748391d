"""Plans for a load: which hardware serves N concurrent users at a speed and first-token
target, with how many replicas, which profile and command, and what it costs.

The plan asks the one resolution (`app.resolve`, through the estimate's own request path in
`app.recipes`) at each concurrency it weighs, so its figures are the ones `POST
/api/estimate` gives at that hardware and concurrency."""
