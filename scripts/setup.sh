#!/usr/bin/env bash
# Set up HALO on a fresh machine, in tiers, each installing only what its targets run:
#
#   scripts/setup.sh          the demo tier (make demo, demo-real, protos, bench-env, test-replicas):
#                             a Python 3.11 venv with halo-rl[all] as requirements/all.lock pins it
#                             (hashed), and a Chromium for
#                             Playwright (Playwright's own build where it can be downloaded, Debian's
#                             `chromium` otherwise: the only step that may need root, through sudo)
#   scripts/setup.sh --test   the test tier (make test, check-protos): the demo tier, the test
#                             extras (pytest, ...; requirements/test.lock), and the tools the tests drive: Prometheus,
#                             Node.js (clients/node, buf), Go, protoc and the Go/Java code generators
#                             (Debian packages, through apt-get)
#
# The engines with their own environments have their own scripts: setup_vllm.sh (.venv-vllm, make
# vllm, part of make test) and setup_tinker_server.sh (.venv-skyrl, make tinker-server).
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

TIER=demo
case "${1:-}" in
  "") ;;
  --test) TIER=test ;;
  *) echo "usage: scripts/setup.sh [--test]" >&2; exit 2 ;;
esac

PY=${HALO_PYTHON:-}
if [ -z "$PY" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      PY=$candidate; break
    fi
  done
fi
[ -n "$PY" ] || { echo "setup: Python 3.11 is required (set HALO_PYTHON)" >&2; exit 1; }

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $PY"
  "$PY" -m venv .venv
  .venv/bin/pip install -q --upgrade pip
fi

# The Python packages come from the hashed lock files (requirements/, made by scripts/lock.sh): the
# demo tier installs halo-rl[all] as requirements/all.lock pins it, the test tier halo-rl[all,test]
# (requirements/test.lock), so this venv holds exactly the versions CI and the images install.
# --no-deps: a lock is the whole resolved set; then halo-rl itself, editable, from the locked setuptools.
# One stamp per tier: the test tier's install covers the demo tier's.
stamp_demo=.venv/.halo-installed stamp_test=.venv/.halo-installed-test
fresh() { [ -f "$1" ] && [ ! pyproject.toml -nt "$1" ] && [ ! setup.py -nt "$1" ] && [ ! "$2" -nt "$1" ]; }
# On a machine with an NVIDIA GPU (or HALO_TORCH=cuda) the pins come from pyproject.toml instead, unhashed:
# the locks hold torch's CPU build, and there torch==2.13.0 is to be PyPI's CUDA build (quickstart-gpu.md).
torch_build=${HALO_TORCH:-}
[ -n "$torch_build" ] || { nvidia-smi -L 2>/dev/null | grep -q '^GPU' && torch_build=cuda || torch_build=cpu; }
install_lock() {   # install_lock <lock> <extras>
  if [ "$torch_build" = cuda ]; then
    echo "setup: a GPU machine: installing the pins of pyproject.toml with PyPI's CUDA torch (pip install -e '.[$2]')"
    .venv/bin/pip install -q -e ".[$2]"
  elif [ "$(HALO_PYTHON=$PY bash scripts/lock.sh --digest)" = "$(sed -n '1s/.*inputs-sha256: //p' "$1")" ]; then
    echo "setup: installing the pinned dependencies (pip install --require-hashes --no-deps -r $1; pip install -e .)"
    .venv/bin/pip install -q --require-hashes --no-deps -r "$1"
    .venv/bin/pip install -q --no-deps --no-build-isolation -e .
  else   # pyproject.toml changed since: its pins, unhashed (tests/test_locks.py fails until the locks are remade)
    echo "setup: $1 was made from an older pyproject.toml (run scripts/lock.sh); installing pip install -e '.[$2]'"
    .venv/bin/pip install -q -e ".[$2]"
  fi
}
if [ "$TIER" = test ]; then
  if ! fresh $stamp_test requirements/test.lock; then
    install_lock requirements/test.lock all,test
    touch $stamp_test $stamp_demo
  fi
elif ! fresh $stamp_demo requirements/all.lock && ! fresh $stamp_test requirements/test.lock; then
  install_lock requirements/all.lock all
  touch $stamp_demo
fi

# xgrammar, vLLM's grammar library: the local_lora learner replays vLLM's grammar mask with it
# (halo.trainers.lora_grammar). --no-deps: its wheel lists triton, a GPU kernel compiler (~300 MB)
# that its CPU matcher never imports; its one other native dependency is apache-tvm-ffi.
if ! .venv/bin/python -c "import xgrammar" 2>/dev/null; then
  echo "setup: installing xgrammar (the learner's grammar mask, as vLLM computes it)"
  .venv/bin/pip install -q --require-hashes --no-deps -r requirements/xgrammar.lock
fi

have_playwright_chromium() {
  .venv/bin/python - <<'PY'
import os, sys
root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or os.path.expanduser("~/.cache/ms-playwright")
sys.exit(0 if os.path.isdir(root) and any(n.startswith("chromium") for n in os.listdir(root)) else 1)
PY
}

if have_playwright_chromium || command -v chromium >/dev/null; then
  :
elif timeout 180 .venv/bin/python -m playwright install chromium >/dev/null 2>&1; then
  echo "setup: installed Playwright's Chromium"
elif command -v apt-get >/dev/null; then
  echo "setup: Playwright's Chromium cannot be downloaded here; installing Debian's chromium"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
else
  echo "setup: no Chromium available: install one and set HALO_CHROMIUM=/path/to/chrome" >&2
  exit 1
fi

if [ "$TIER" = demo ]; then
  echo "setup: ready for make demo (.venv, $(command -v chromium || echo 'Playwright Chromium')); make test adds the test tools"
  exit 0
fi

# ---- the test tier -----------------------------------------------------------------------------
# Prometheus (halo up runs it; the deploy tests scrape a real run) and Node.js for clients/node.
apt_install() {
  command -v apt-get >/dev/null || { echo "setup: install $* (no apt-get here)" >&2; return 1; }
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  [ -n "${HALO_APT_UPDATED:-}" ] || { $SUDO apt-get update -qq >/dev/null; HALO_APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
  echo "setup: installing Debian's prometheus"
  apt_install prometheus
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: installing Node.js"
  apt_install nodejs npm
fi
if ! command -v jq >/dev/null; then
  echo "setup: installing jq (docs/guides/other-languages.md's grpcurl episode, run by tests/test_docs.py)"
  apt_install jq
fi
# npm ci in a folder with a package-lock.json, once per lock change (a stamp in its node_modules).
npm_ci_once() {
  local dir=$1 why=$2 stamp=$1/node_modules/.halo-installed
  if [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
    echo "setup: installing $why (npm ci in $dir)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    touch "$stamp"
  fi
}
npm_ci_once clients/node "clients/node's pinned packages"
npm_ci_once scripts/buf "buf and protoc-gen-es, pinned (checks and TypeScript code of protos/)"

# Go for clients/go, offline: Debian packages the compiler, protoc and its Go plugins, and the
# sources of grpc-go and protobuf-go under /usr/share/gocode (the Go module proxy is out of reach);
# also grpc-java's protoc plugin, for protos/buf.gen.yaml's Java output.
# github.com/golang/protobuf must be 1.5 (APIv2-backed; its proto/wrappers.go tells): grpc-go's
# codec goes through it, and the 1.3 that apt picks by default panics on protoc-gen-go 1.28 messages.
gocode=/usr/share/gocode/src
if ! command -v go >/dev/null || ! command -v protoc-gen-go-grpc >/dev/null || ! command -v grpc_java_plugin >/dev/null \
   || [ ! -d $gocode/google.golang.org/grpc ] || [ ! -f $gocode/github.com/golang/protobuf/proto/wrappers.go ]; then
  echo "setup: installing Go, protoc and the Go/Java gRPC code generators (Debian)"
  apt_install golang-go protobuf-compiler protoc-gen-go protoc-gen-go-grpc protobuf-compiler-grpc-java-plugin \
    golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev
fi
echo "setup: ready for make test (.venv, $(command -v chromium || echo 'Playwright Chromium'), $(prometheus --version 2>&1 | head -1 | cut -d' ' -f1-3), node $(node --version), buf $(scripts/buf/node_modules/.bin/buf --version), $(go version | cut -d' ' -f3))"
