"""Errors that know their gRPC status code, shared by services and clients.

Service cores raise them; `translate_errors` wraps servicer methods so a caller sees NOT_FOUND,
RESOURCE_EXHAUSTED, ... with the message, never a stack trace. The typed clients turn a status
back into the same class (`from_rpc_error`), so `except NotFound:` works on both sides.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import grpc


class HaloError(Exception):
    code: grpc.StatusCode = grpc.StatusCode.INTERNAL


class NotFound(HaloError):
    code = grpc.StatusCode.NOT_FOUND


class InvalidArgument(HaloError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class ResourceExhausted(HaloError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class Unavailable(HaloError):
    code = grpc.StatusCode.UNAVAILABLE


class FailedPrecondition(HaloError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class AlreadyExists(HaloError):
    code = grpc.StatusCode.ALREADY_EXISTS


class DeadlineExceeded(HaloError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED


class Unauthenticated(HaloError):
    code = grpc.StatusCode.UNAUTHENTICATED


class Unimplemented(HaloError):
    """The service does not know the RPC: it is older than this client (an optional call to skip)."""
    code = grpc.StatusCode.UNIMPLEMENTED


_BY_CODE = {cls.code: cls for cls in HaloError.__subclasses__()}

#: Longest error text a reply carries. Errors quote their input (a URL, a bid, an id), and a reply
#: must not grow with the request: a 9 MB goto URL once came back in an error larger than the gRPC
#: message limit, so the call failed instead of saying what was wrong.
MAX_ERROR_CHARS = 2000
#: Longest piece of input an error quotes.
MAX_QUOTED_CHARS = 200


def bounded(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """`text` cut to `limit` characters, saying how long it was when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (cut: {len(text)} characters)"


def quoted(value: str, limit: int = MAX_QUOTED_CHARS) -> str:
    """repr() of a piece of input for an error message, cut to `limit` characters with its length."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value)} characters)"


def rpc_message(code: grpc.StatusCode, details: str) -> str:
    """How a client error reads: the status code's name, then what went wrong."""
    return f"{code.name}: {details}"


def from_rpc_error(exc: grpc.RpcError) -> HaloError:
    """The HaloError for a failed call (INTERNAL and unknown codes give a plain HaloError)."""
    code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    details = exc.details() if hasattr(exc, "details") else str(exc)
    error = _BY_CODE.get(code, HaloError)(rpc_message(code, details))
    if type(error) is HaloError:
        error.code = code
    return error


def translate_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate an async servicer method (unary or server-streaming) to map HaloError to a status."""
    if inspect.isasyncgenfunction(method):
        @functools.wraps(method)
        async def stream_wrapper(self, request, context):
            try:
                async for item in method(self, request, context):
                    yield item
            except HaloError as exc:
                await context.abort(exc.code, bounded(str(exc)))

        return stream_wrapper

    @functools.wraps(method)
    async def wrapper(self, request, context):
        try:
            return await method(self, request, context)
        except HaloError as exc:
            await context.abort(exc.code, bounded(str(exc)))

    return wrapper
