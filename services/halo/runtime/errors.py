"""Re-export of the shared error types (they live with the clients so both sides use one set)."""

from halo.errors import (  # noqa: F401
    AlreadyExists, DeadlineExceeded, FailedPrecondition, HaloError, InvalidArgument, NotFound,
    ResourceExhausted, Unavailable, translate_errors,
)
