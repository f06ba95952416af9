"""Request checks every service gets from the runtime, before its handler runs.

proto3 enums are open: a client may send `image_format: 42` and the message parses, the unknown
number kept as an int. A handler that maps enums with `.get(value, default)` would then silently
do something the caller never asked for. The runtime refuses such a request up front with
INVALID_ARGUMENT naming the field (`observation.image_format`), for every enum in every request
of every service, so no handler has to remember to.
"""

from __future__ import annotations

import inspect

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message


def first_bad_enum(message: Message, prefix: str = "") -> str | None:
    """`field.path: 42 is not a ImageFormat value` for the first out-of-range enum, else None."""
    for field, value in message.ListFields():
        path = f"{prefix}{field.name}"
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            for key, item in value.items():
                problem = _check(value_field, item, f"{path}[{key!r}]")
                if problem:
                    return problem
            continue
        items = value if field.is_repeated else [value]
        for i, item in enumerate(items):
            problem = _check(field, item, f"{path}[{i}]" if field.is_repeated else path)
            if problem:
                return problem
    return None


def _check(field: FieldDescriptor, value, path: str) -> str | None:
    if field.enum_type is not None:
        if value not in field.enum_type.values_by_number:
            valid = ", ".join(f"{v.name}={v.number}" for v in field.enum_type.values)
            return f"{path}: {value} is not a {field.enum_type.name} value ({valid})"
        return None
    if field.message_type is not None:
        return first_bad_enum(value, f"{path}.")
    return None


class EnumValidationInterceptor(grpc.aio.ServerInterceptor):
    """Refuses any request holding an enum number its type does not define (INVALID_ARGUMENT)."""

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_streaming:
            return handler    # unknown method (UNIMPLEMENTED) or a streaming request (none in the contract)
        inner = handler.unary_unary or handler.unary_stream

        async def refuse(context, problem: str):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)

        if handler.unary_unary is not None:
            async def unary(request, context):
                problem = first_bad_enum(request) if isinstance(request, Message) else None
                if problem:
                    await refuse(context, problem)
                return await inner(request, context)

            return grpc.unary_unary_rpc_method_handler(
                unary, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )

        if inspect.isasyncgenfunction(inner):
            async def streaming(request, context):
                problem = first_bad_enum(request) if isinstance(request, Message) else None
                if problem:
                    await refuse(context, problem)
                async for item in inner(request, context):
                    yield item
        else:   # a handler that writes with `context.write` (grpc_health's Watch)
            async def streaming(request, context):
                problem = first_bad_enum(request) if isinstance(request, Message) else None
                if problem:
                    await refuse(context, problem)
                return await inner(request, context)

        return grpc.unary_stream_rpc_method_handler(
            streaming, request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
