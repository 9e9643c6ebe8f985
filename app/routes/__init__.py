"""HTTP routes: thin, each delegating to a store or service."""
