# The two commands a newcomer needs (see README):
#   make demo   -> installs what it needs, then runs the main job on embedded defaults
#   make test   -> installs what the tests need, then lint, type check and the test suite
.PHONY: demo serve test lint install install-test

install:
	scripts/install.sh run

install-test:
	scripts/install.sh test

demo: install
	.venv/bin/callassist demo

serve: install
	.venv/bin/callassist serve

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy

test: install-test lint
	HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q -ra --durations=15
