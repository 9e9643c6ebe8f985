"""Sources of the built-in suites (``bench/suites/*.yaml``), written by hand.

Each scene module lists its scenarios with :func:`bench.authoring._dsl.sc`; the
builder (``python -m bench.authoring.build``) assigns ids, owners and the dev/test
split and writes the YAML files. Edit the sources, then rebuild; a test checks the
shipped YAML is up to date.
"""
