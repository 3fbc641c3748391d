"""How right the estimate is: each accepted record's estimate kept as it was compared, the
per-class accuracy on shipped checks and accepted records, and the ranges records update."""
