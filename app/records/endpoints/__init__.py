"""Where records come in and go out: the JSON API (`api`, its answers in `responses`, its
bodies read by `json_body`), the pages and htmx fragments (`routes`, what they list in
`pages`, the list's `filters`, a record's `charts`), the record form (`forms`), the console
commands (`cli`), one submission's unit of work (`ingest`) and the process submissions are
answered in (`submission_process`).

The top room: it may import every other room of records, and none of them imports it."""
