"""Two records side by side: every difference marked (`compare`), a launch command read as
settings (`command_diff`), what was changed one setting at a time (`setting_changes`), what
the figures did with their noise bands (`effects`), prompt-by-prompt verdicts
(`paired`) and pass rates as counts (`statistics`).

Imports only the record's schema: it compares what it is given."""
