"""The owner console's assets (a package so that they ship as package data)."""
