#!/usr/bin/env bash
# A real Tinker-API server for this machine: PyPI's `skyrl` (its FastAPI Tinker server with the
# JAX backend, which runs on CPU) in its own environment, `.venv-skyrl`.
#
# Like vLLM, it gets its own venv because its pins clash with HALO's: skyrl 0.3.0 wants
# transformers 5.6.1-5.8.0, tinker-cookbook caps it at 5.5.4. HALO only talks to it over HTTP
# with the real tinker SDK. `make tinker-server` runs this; `make test-tinker-server` uses it.
# skyrl 0.3.0 is the newest that runs on Python 3.11 (0.4.0 needs >= 3.12).
# Idempotent: a second run only checks the stamp. About 2.2 GB, a few minutes once.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv-skyrl
PY=${HALO_PYTHON:-python3.11}
SKYRL="skyrl[tinker,jax]==0.3.0"
TINKER=tinker==0.38.0                # the SDK version HALO pins: the wire adapter uses its tinker.proto
TRANSFORMERS="transformers>=5.6.1,<=5.8.0"
stamp=$VENV/.halo-installed

if [ -f "$stamp" ] && [ ! "$0" -nt "$stamp" ]; then
  exit 0
fi

started=$(date +%s)
[ -x $VENV/bin/python ] || { echo "setup-tinker-server: creating $VENV with $PY"; "$PY" -m venv $VENV; }
echo "setup-tinker-server: installing $SKYRL into $VENV (about 2.2 GB, a few minutes once)"
# torch first: the local CPU wheel (peft needs torch; PyPI's torch is a ~3 GB CUDA build), so the
# resolver never looks for another.
$VENV/bin/pip install -q torch==2.13.0
$VENV/bin/pip install -q "$SKYRL" "$TRANSFORMERS" "$TINKER"

# Patch 1 (Python 3.11): skyrl/tinker/types.py declares `MultiModalKwargs(TypedDict)` from `typing`
# inside a pydantic model, which pydantic refuses on Python < 3.12 ("Please use
# typing_extensions.TypedDict"), so `import skyrl.tinker.api` fails. The same class from
# typing_extensions is what pydantic asks for. Idempotent: the patched file says so.
types_py=$($VENV/bin/python -c "import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec('skyrl').origin).parent / 'tinker' / 'types.py')")
if ! grep -q "HALO: py311 TypedDict" "$types_py"; then
  $VENV/bin/python - "$types_py" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
old = "from typing import Annotated, Any, Literal, TypedDict\n"
if old not in text:
    sys.exit(f"setup-tinker-server: {path} changed: expected {old!r}")
new = "from typing import Annotated, Any, Literal\n\nfrom typing_extensions import TypedDict  # HALO: py311 TypedDict (pydantic needs this one before 3.12)\n"
open(path, "w").write(text.replace(old, new, 1))
PY
fi
# (Patch 2, starting the engine without `uv run`, is not a file patch: the launcher
# tests/tinker_server/skyrl_server.py starts the engine with this venv's python.)

$VENV/bin/python -c "import skyrl.tinker.api, skyrl.tinker.engine, tinker.proto.tinker_public_pb2, jax" >/dev/null
touch "$stamp"
echo "setup-tinker-server: skyrl $($VENV/bin/python -c 'import importlib.metadata as m; print(m.version("skyrl"))') ready in $VENV ($(( $(date +%s) - started )) s)"
