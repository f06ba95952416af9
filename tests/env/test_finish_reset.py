"""Reading a replica's /finish survives a connection the sites server reset (a kept-alive connection
it had just closed as idle): asked once more on a new connection. A server that resets every time
still fails, and the env reports that as an environment failure, never a task outcome."""

from __future__ import annotations

import asyncio
import socket
import struct
from types import SimpleNamespace

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from halo.env.session import SessionManager

BODY = b"<pre>{}</pre>"


async def _server(resets: int):
    """A raw HTTP server that resets its first `resets` connections after reading their request
    (SO_LINGER 0: the peer sees ECONNRESET) and answers the others."""
    seen = {"connections": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen["connections"] += 1
        await reader.readuntil(b"\r\n\r\n")
        if seen["connections"] <= resets:
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(BODY), BODY))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, seen


@pytest.mark.parametrize("resets, answered", [(1, True), (5, False)])
async def test_a_reset_connection_is_asked_once_more_and_a_server_that_keeps_resetting_fails(resets, answered):
    server, seen = await _server(resets)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/finish"
    manager = SimpleNamespace(settings=SimpleNamespace(navigation_timeout_ms=5000))
    async with server, async_playwright() as pw:
        request = await pw.request.new_context()
        session = SimpleNamespace(context=SimpleNamespace(request=request))
        try:
            if answered:
                response = await SessionManager._get_once_more_on_reset(manager, session, url)
                assert response.ok and (await response.body()) == BODY
            else:
                with pytest.raises(PlaywrightError, match="ECONNRESET|socket hang up"):
                    await SessionManager._get_once_more_on_reset(manager, session, url)
        finally:
            await request.dispose()
    assert seen["connections"] == 2   # once, and once more: never a third time
