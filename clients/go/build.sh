#!/usr/bin/env bash
# Generate the stubs and build bin/halo-env-demo, offline: GOPATH mode (GO111MODULE=off) over
# Debian's packaged Go sources in /usr/share/gocode (golang-google-grpc-dev 1.33,
# golang-google-protobuf-dev 1.28, golang-github-golang-protobuf-1-5-dev), because the Go module
# proxy is not reachable here. This module is linked into a private GOPATH under its import path.
# With the proxy: `go mod tidy && go build ./...` in clients/go (after generate.sh).
#
#   clients/go/build.sh [output dir]       (default clients/go/bin)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here/bin}" && cd "${1:-$here/bin}" && pwd)
command -v go >/dev/null || { echo "build: go is missing: run scripts/setup.sh --test (Debian: golang-go)" >&2; exit 2; }
gocode=/usr/share/gocode
[ -d "$gocode/src/google.golang.org/grpc" ] || { echo "build: $gocode/src/google.golang.org/grpc is missing (Debian: golang-google-grpc-dev)" >&2; exit 2; }
[ -f "$gocode/src/github.com/golang/protobuf/proto/wrappers.go" ] || { echo "build: github.com/golang/protobuf in $gocode is 1.3, which panics on protoc-gen-go 1.28 messages: install golang-github-golang-protobuf-1-5-dev" >&2; exit 2; }

bash "$here/generate.sh"
gopath=$(mktemp -d); trap 'rm -rf "$gopath"' EXIT
mkdir -p "$gopath/src/github.com/halo-rl/halo/clients"
ln -s "$here" "$gopath/src/github.com/halo-rl/halo/clients/go"
(cd "$gopath/src/github.com/halo-rl/halo/clients/go" && \
  GO111MODULE=off GOPATH="$gopath:$gocode" GOFLAGS= \
  go build -o "$out/halo-env-demo" ./cmd/halo-env-demo)
echo "build: $out/halo-env-demo ($(go version | cut -d' ' -f3))"
