#!/usr/bin/env bash
# Generate the halo.v1 Go stubs from protos/halo/v1 into clients/go/halov1 with protoc-gen-go and
# protoc-gen-go-grpc. The M options place them in this module (import path
# github.com/halo-rl/halo/clients/go/halov1) instead of the protos' default go_package: the same
# thing any Go user does to put HALO's stubs in their own module (buf: managed mode go_package_prefix).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
protos=$(cd "$here/../../protos" && pwd)
module=github.com/halo-rl/halo/clients/go
for tool in protoc protoc-gen-go protoc-gen-go-grpc; do
  command -v "$tool" >/dev/null || { echo "generate: $tool is missing: run scripts/setup.sh --test (Debian: protobuf-compiler protoc-gen-go protoc-gen-go-grpc)" >&2; exit 2; }
done

files=(); maps=()
for f in "$protos"/halo/v1/*.proto; do
  rel=halo/v1/$(basename "$f"); files+=("$rel"); maps+=("M$rel=$module/halov1")
done
go_opts=$(IFS=,; echo "module=$module,${maps[*]}")
rm -rf "$here/halov1"
(cd "$protos" && protoc -I . \
  --go_out="$here" --go_opt="$go_opts" \
  --go-grpc_out="$here" --go-grpc_opt="$go_opts" \
  "${files[@]}")
echo "generate: $(ls "$here/halov1" | wc -l) files in clients/go/halov1 ($(protoc --version), $(protoc-gen-go --version 2>&1 | tail -1))"
