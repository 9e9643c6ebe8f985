"""Built-in suites (package data): dev.yaml (tests, development), test.yaml (reported figures)."""
