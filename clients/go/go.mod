// HALO from Go: the halo.v1 stubs (generated into ./halov1 by generate.sh, not committed) and a
// small dialing package. Offline, build.sh builds in GOPATH mode against Debian's packaged sources
// (no go.sum is needed there); with the module proxy reachable, `go mod tidy` then `go build ./...`.
module github.com/halo-rl/halo/clients/go

go 1.19

require (
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)
