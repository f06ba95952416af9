"""Generated protobuf/gRPC stubs for halo.v1 (do not edit)."""
