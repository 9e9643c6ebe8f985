"""Owner, profile, line and preset models; their Redis stores; trigger matching."""
