"""Tasks: the user's own prompts with checks, stored, imported and run by the benchmark."""
