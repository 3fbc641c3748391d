"""Reproduction records: what one is made of (`schemas`), how one comes in and is kept
(`endpoints`, `storage`, `importers`), what accepted ones show (`evidence`), review,
comparing two (`comparison`) and exports (`export`).

May import the catalog, the resolution's figures and the client's result models; never the
recipe pages, the plan or the jobs."""
