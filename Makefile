# The two commands of the README, plus helpers. Every target sets up what it needs first.
.PHONY: setup demo test protos bench-env

setup:
	@bash scripts/setup.sh

# The main job on the embedded default: GRPO on the local playground replica, showing it learn.
demo: setup
	.venv/bin/halo train

test: setup
	.venv/bin/python -m pytest -q -p no:cacheprovider

protos: setup
	.venv/bin/halo protos

bench-env: setup
	.venv/bin/halo bench env
