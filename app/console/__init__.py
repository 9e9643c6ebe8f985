"""The owner console at ``/app``: its browser sessions and static page."""
