#!/usr/bin/env bash
# The contract checks of protos/halo/v1 (rules and exceptions in protos/buf.yaml):
#   1. buf lint;
#   2. buf breaking against protos/baseline/halo-v1.binpb, the committed image of v1 as promised:
#      works on any clone (shallow, no main branch, a tarball) and is the floor no change may go
#      below;
#   3. buf breaking against the git base of the change, so that something added after the baseline
#      and released on main is protected too: on a branch, the point where it left main (merge-base:
#      everything the branch changes, whatever its number of commits); on main itself (a fresh CI
#      clone, HEAD = main) the first parent, HEAD~1, which for the lead's merge commits is main
#      before the merge. HALO_PROTOS_AGAINST=<git ref> overrides it (e.g. the last release tag).
#      A base from before these checks existed (no protos/buf.yaml) or a clone without history is
#      said and skipped: check 2 still ran.
# The working tree is what is checked, so uncommitted proto edits are caught before the commit.
#
#   scripts/check_protos.sh                    # all checks
#   scripts/check_protos.sh --update-baseline  # after the checks pass: the image := the protos now
set -euo pipefail
cd "$(dirname "$0")/.."

BUF=${HALO_BUF:-scripts/buf/node_modules/.bin/buf}
BASELINE=protos/baseline/halo-v1.binpb
[ -x "$BUF" ] || { echo "check_protos: $BUF is missing: run scripts/setup.sh --test (npm ci in scripts/buf)" >&2; exit 2; }

echo "check_protos: buf lint protos"
"$BUF" lint protos

echo "check_protos: buf breaking protos against $BASELINE"
"$BUF" breaking protos --against "$BASELINE"

git_base() {  # prints "<commit> <why>", or nothing without usable history
  local head main="" base
  head=$(git rev-parse -q --verify HEAD 2>/dev/null) || return 0
  for ref in main origin/main; do
    if git rev-parse -q --verify "$ref^{commit}" >/dev/null; then main=$ref; break; fi
  done
  if [ -n "$main" ] && base=$(git merge-base HEAD "$main" 2>/dev/null) && [ "$base" != "$head" ]; then
    echo "$base where this branch left $main"
  elif base=$(git rev-parse -q --verify 'HEAD~1^{commit}' 2>/dev/null); then
    echo "$base HEAD~1 (HEAD is on ${main:-the only branch}: its first parent, main before the last merge)"
  fi
}

if [ -n "${HALO_PROTOS_AGAINST:-}" ]; then
  base=$(git rev-parse --verify "$HALO_PROTOS_AGAINST^{commit}"); why="HALO_PROTOS_AGAINST=$HALO_PROTOS_AGAINST"
else
  read -r base why <<<"$(git_base)" || true
fi
if [ -z "${base:-}" ]; then
  echo "check_protos: no git base (no history: shallow clone or first commit); the baseline check ran"
else
  if ! git cat-file -e "$base:protos/buf.yaml" 2>/dev/null; then
    echo "check_protos: git base ${base:0:12} ($why) predates protos/buf.yaml: skipped; the baseline check ran"
  else
    echo "check_protos: buf breaking protos against git ${base:0:12} ($why)"
    tree=$(mktemp -d); trap 'rm -rf "$tree"' EXIT
    git archive "$base" protos | tar -x -C "$tree"
    "$BUF" breaking protos --against "$tree/protos"
  fi
fi

if [ "${1:-}" = "--update-baseline" ]; then
  "$BUF" build protos --exclude-source-info -o "$BASELINE"
  echo "check_protos: wrote $BASELINE (commit it with the change that motivates it)"
fi
echo "check_protos: ok"
