"""Review: each step appended to a record's history (`steps`), and what accepting a record
would change on the recipe pages, shown before a maintainer accepts (`consequences`).

Imports storage and evidence; never the endpoints."""
