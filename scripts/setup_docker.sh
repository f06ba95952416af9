#!/usr/bin/env bash
# What the `docker compose up` test (tests/deploy/test_compose_up.py) needs on a fresh Debian machine:
# Debian's Docker engine (docker.io: dockerd, containerd, runc), debootstrap, and a base image made
# from Debian's own packages for where Docker Hub cannot be reached (python:3.11-slim-bookworm
# cannot be pulled there): `debootstrap --variant=minbase` of bookworm with Python 3.11, packed as a
# tarball that `docker import` turns into an image. The tarball is cached under
# $HALO_DOCKER_CACHE (default /var/cache/halo-docker as root, ~/.cache/halo/docker otherwise),
# named by a hash of what it is made from, so a second run only checks. No daemon is started here:
# the test starts its own (and stops it) when no engine answers.
#
#   scripts/setup_docker.sh            install what is missing, make the base tarball once
#   scripts/setup_docker.sh --print    print the cached tarball's path (nothing else)
set -euo pipefail

if [ "$(id -u)" -eq 0 ]; then default_cache=/var/cache/halo-docker; else default_cache="$HOME/.cache/halo/docker"; fi
CACHE=${HALO_DOCKER_CACHE:-$default_cache}
SUITE=bookworm
MIRROR=${HALO_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES=python3,python3-venv,ca-certificates
key=$(printf '%s\n' "v1" "$SUITE" minbase "$PACKAGES" "$MIRROR" | sha256sum | cut -c1-12)
tarball="$CACHE/debian-base-$key.tar"

if [ "${1:-}" = "--print" ]; then echo "$tarball"; exit 0; fi

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || { echo "setup_docker: install ${missing[*]} (no apt-get here)" >&2; exit 1; }
  echo "setup_docker: installing ${missing[*]} (Debian)"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v docker >/dev/null || { echo "setup_docker: no docker CLI (Debian's docker.io ships one)" >&2; exit 1; }

if [ ! -s "$tarball" ]; then
  echo "setup_docker: making the Debian base image ($SUITE minbase + $PACKAGES, about a minute once)"
  $SUDO mkdir -p "$CACHE"
  rootfs=$($SUDO mktemp -d "$CACHE/rootfs.XXXXXX")
  trap '$SUDO rm -rf "$rootfs"' EXIT
  $SUDO debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$MIRROR" >/dev/null
  $SUDO rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/tmp/*
  $SUDO tar -C "$rootfs" --numeric-owner -cf "$tarball.part" .
  $SUDO mv "$tarball.part" "$tarball"
fi
echo "setup_docker: ready ($(dockerd --version | cut -d, -f1), base $(basename "$tarball"), $(du -h "$tarball" | cut -f1))"
