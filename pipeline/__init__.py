"""pipeline package (filled by later issues)."""
