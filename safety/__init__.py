"""safety package (filled by later issues)."""
