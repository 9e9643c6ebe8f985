"""The call page's static assets (HTML, JS, CSS), shipped as package data."""
