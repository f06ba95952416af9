# Sourced by the setup scripts of the engines' own venvs (setup_vllm.sh, setup_checkov.sh).
#
# Such a venv is built once per machine in the user's cache, in a folder named by a hash of what it
# is built from (its requirements and its setup script), and the clone's `.venv-NAME` is a link to
# that folder: a fresh clone reuses it in a second instead of reinstalling it (minutes). A changed
# requirement gives a new folder; the old one stays until removed. HALO_VENV_CACHE moves the cache.
# A `.venv-NAME` that is a folder (made before this cache existed) is used where it is.

# cached_venv LINK NAME FILE...: sets VENV to the folder to build in and takes its lock (fd 9), so
# that two clones setting up at once build it once. Returns 0 when that venv is ready (linked).
cached_venv() {
  local link=$1 name=$2; shift 2
  if [ -d "$link" ] && [ ! -L "$link" ]; then
    VENV=$link
    [ -f "$VENV/.halo-installed" ] || return 1
    local file
    for file in "$@"; do
      [ ! "$file" -nt "$VENV/.halo-installed" ] || return 1
    done
    return 0
  fi
  local key root
  key=$(cat "$@" | sha256sum | cut -c1-12)
  root=${HALO_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/halo/venvs}
  mkdir -p "$root"
  VENV=$root/$name-$key
  exec 9>"$VENV.lock"
  flock 9
  if [ -f "$VENV/.halo-installed" ]; then
    ln -sfn "$VENV" "$link"
    return 0
  fi
  rm -rf "$VENV"   # what an interrupted build left
  return 1
}
