// Package halo dials HALO's gRPC services from Go. The typed clients are the generated ones in
// github.com/halo-rl/halo/clients/go/halov1 (halov1.NewEnvServiceClient(conn), ...); this package
// only adds what every HALO caller needs on the connection: the bearer token that services started
// with --auth-token require, TLS when given, and a receive limit that fits a full screenshot.
package halo

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// MaxReceiveBytes fits an observation with a full-page PNG screenshot (the services' own limit).
const MaxReceiveBytes = 16 * 1024 * 1024

// Options of a connection; the zero value is plaintext without a token (loopback, `halo up`).
type Options struct {
	Token string                           // sent as `authorization: Bearer <token>` on every call
	TLS   credentials.TransportCredentials // nil: plaintext
}

// Dial connects to one HALO service at target (host:port). Dialing does not wait for the server:
// the first call does, within its own deadline.
func Dial(target string, options Options) (*grpc.ClientConn, error) {
	dialOptions := []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxReceiveBytes))}
	if options.TLS != nil {
		dialOptions = append(dialOptions, grpc.WithTransportCredentials(options.TLS))
	} else {
		dialOptions = append(dialOptions, grpc.WithInsecure())
	}
	if options.Token != "" {
		dialOptions = append(dialOptions, grpc.WithPerRPCCredentials(bearer{token: options.Token, secure: options.TLS != nil}))
	}
	conn, err := grpc.Dial(target, dialOptions...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", target, err)
	}
	return conn, nil
}

// bearer puts the token on each call; allowed over plaintext because HALO's loopback default is.
type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }
