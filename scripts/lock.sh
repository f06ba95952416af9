#!/usr/bin/env bash
# Regenerate the hashed lock files in requirements/ from pyproject.toml, for Linux x86_64, CPython 3.11:
#
#   requirements/services.lock   the base dependencies + the build requirements (setuptools, wheel):
#                                the lean images (halo serve sites|env|reward), the SDK, the CLI's client commands
#   requirements/all.lock        base + every extra (halo-rl[all]) + the build requirements: gateway/trainer image
#   requirements/all-cuda.lock   all, with PyPI's torch (the CUDA build, its nvidia-* libraries and triton):
#                                the trainer-gpu image (compose --profile gpu, Kubernetes' trainer-gpu)
#   requirements/test.lock       all + the test extra: the host venv (scripts/setup.sh --test)
#   requirements/xgrammar.lock   xgrammar and apache-tvm-ffi alone (installed with --no-deps: see scripts/setup.sh)
#
# Each is the whole resolved set, every line `name==version --hash=sha256:...`:
#   pip install --require-hashes --no-deps -r requirements/X.lock
# then `pip install --no-deps --no-build-isolation -e .` (or the project's wheel) installs exactly that set.
# torch is the CPU build (torch==<pin>+cpu): from /opt/wheels where it lies there, otherwise from
# download.pytorch.org's CPU wheels (HALO_LOCK_FIND_LINKS overrides). Everything else comes from PyPI.
#
# A second run keeps the versions already locked (uv prefers the existing output); `scripts/lock.sh
# --upgrade` re-resolves everything to the newest versions the pins allow. Each lock's header records the
# sha256 of the dependency lists it was made from; `scripts/lock.sh --digest` prints the current one
# (tests/test_locks.py and scripts/setup.sh compare them: a stale lock fails the test).
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9
PYTHON_VERSION=3.11            # the oldest 3.11: the locks install on any CPython 3.11 (Debian bookworm's is 3.11.2)
PLATFORM=x86_64-manylinux_2_28
UPGRADE=() DIGEST_ONLY=""
case "${1:-}" in
  "") ;;
  --upgrade) UPGRADE=(--upgrade) ;;
  --digest) DIGEST_ONLY=1 ;;
  *) echo "usage: scripts/lock.sh [--upgrade | --digest]" >&2; exit 2 ;;
esac

PY=${HALO_PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3

work=$(mktemp -d /tmp/halo-lock.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The inputs, read from pyproject.toml: the build requirements, the torch pin (made +cpu), and the
# sha256 of the dependency lists that every lock's header records.
"$PY" - "$work" <<'PY'
import hashlib, json, re, sys, tomllib
work = sys.argv[1]
p = tomllib.load(open("pyproject.toml", "rb"))
build = p["build-system"]["requires"]
deps, extras = p["project"]["dependencies"], p["project"]["optional-dependencies"]
open(f"{work}/build-system.txt", "w").write("".join(r + "\n" for r in build))
torch = [d for group in [deps, *extras.values()] for d in group if re.match(r"torch\s*==", d)]
open(f"{work}/torch-cpu.txt", "w").write("".join(d.split(";")[0].strip() + "+cpu\n" for d in torch))
digest = hashlib.sha256(json.dumps({"build-system": build, "dependencies": deps, "optional-dependencies": extras},
                                   sort_keys=True).encode()).hexdigest()
open(f"{work}/digest", "w").write(digest)
PY
digest=$(cat "$work/digest")
if [ -n "$DIGEST_ONLY" ]; then echo "$digest"; exit 0; fi

tool=/tmp/halo-lock-uv-$UV_VERSION
if [ ! -x "$tool/bin/uv" ] || [ "$("$tool/bin/uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  echo "lock: installing uv $UV_VERSION in $tool (a throwaway venv)"
  rm -rf "$tool"; "$PY" -m venv "$tool"
  "$tool/bin/pip" install -q "uv==$UV_VERSION"
fi
uv=$tool/bin/uv

# xgrammar, vLLM's grammar library, for the local_lora learner (halo.trainers.lora_grammar): not a
# dependency of halo-rl (its wheel lists triton, a GPU compiler its CPU matcher never imports).
printf 'xgrammar==0.2.8\napache-tvm-ffi==0.1.15.post2\n' > "$work/xgrammar.txt"
xg_digest=$(sha256sum "$work/xgrammar.txt" | cut -d' ' -f1)

links=${HALO_LOCK_FIND_LINKS:-}
if [ -z "$links" ]; then
  if compgen -G "/opt/wheels/torch-*+cpu-cp311-*x86_64.whl" >/dev/null; then links=/opt/wheels
  else links=https://download.pytorch.org/whl/cpu/torch/; fi
fi

find_links=(--find-links "$links")   # where torch's CPU build lies (none for all-cuda: PyPI's torch)
compile() {   # compile <lock name> <inputs sha256> <uv pip compile arguments...>
  local name=$1 sha=$2; shift 2
  local out=requirements/$name.lock body=$work/$name.body
  [ -f "$out" ] && cp "$out" "$body"   # uv keeps the versions of an existing output unless --upgrade
  (cd "$work" && "$uv" pip compile --quiet --generate-hashes --no-header --python-version "$PYTHON_VERSION" \
     --python-platform "$PLATFORM" --index-url https://pypi.org/simple "${find_links[@]}" \
     "${UPGRADE[@]}" -o "$body" "$@")
  {
    echo "# requirements/$name.lock: made by scripts/lock.sh (uv $UV_VERSION pip compile --generate-hashes, CPython $PYTHON_VERSION, $PLATFORM); inputs-sha256: $sha"
    echo "# Install: pip install --require-hashes --no-deps -r requirements/$name.lock. Do not edit: run scripts/lock.sh."
    grep -v '^# requirements/\|^# Install: ' "$body"
  } > "$out"
  echo "lock: $out ($(grep -c '^[A-Za-z0-9]' "$out") packages)"
}
root=$PWD
# test.lock first: all.lock and services.lock take its versions (-c), so the three agree on every package.
compile test "$digest" "$root/pyproject.toml" build-system.txt --extra all --extra test --override torch-cpu.txt
grep -o '^[A-Za-z0-9][^ ]*==[^ ]*' requirements/test.lock > "$work/test-pins.txt"
compile all "$digest" "$root/pyproject.toml" build-system.txt --extra all --override torch-cpu.txt -c test-pins.txt
compile services "$digest" "$root/pyproject.toml" build-system.txt -c test-pins.txt
grep -v '^torch==' "$work/test-pins.txt" > "$work/test-pins-but-torch.txt"
find_links=()
compile all-cuda "$digest" "$root/pyproject.toml" build-system.txt --extra all -c test-pins-but-torch.txt
find_links=(--find-links "$links")
compile xgrammar "$xg_digest" xgrammar.txt --no-deps
# uv names pyproject.toml by the path it was given: name it as the repository does.
# and the constraint file that only keeps versions in step is no reason for a package to be there.
sed -i -e "s#$root/pyproject.toml#pyproject.toml#g" -e '/^    #   -c test-pins.txt$/d' \
  -e '/^    #   -c test-pins-but-torch.txt$/d' requirements/*.lock
