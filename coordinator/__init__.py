"""coordinator package (filled by later issues)."""
