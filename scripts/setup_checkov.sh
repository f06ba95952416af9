#!/usr/bin/env bash
# checkov, a maintained policy checker from PyPI, in its own environment `.venv-checkov`: it checks
# the rendered Kubernetes manifests (Pod Security "restricted", NetworkPolicies, service-account
# tokens, ...) in tests/deploy/test_k8s.py. Its own venv because its pins clash with the project's
# (scripts/checkov-requirements.txt says which). Idempotent: a second run only checks the stamp.
set -euo pipefail
cd "$(dirname "$0")/.."

REQS=scripts/checkov-requirements.txt
PY=${HALO_PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
source scripts/venv_cache.sh
if cached_venv .venv-checkov checkov "$REQS" "$0"; then
  exit 0
fi
stamp=$VENV/.halo-installed
[ -x $VENV/bin/python ] || { echo "setup-checkov: creating $VENV with $PY"; "$PY" -m venv $VENV; }
echo "setup-checkov: installing checkov and its pinned dependencies into $VENV"
$VENV/bin/pip install -q --no-deps -r $REQS
$VENV/bin/checkov --version >/dev/null
touch "$stamp"
[ "$VENV" = .venv-checkov ] || ln -sfn "$VENV" .venv-checkov
