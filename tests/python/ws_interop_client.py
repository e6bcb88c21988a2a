# An independent WebSocket client (python3-websockets, Debian's package for /usr/bin/python3) for
# the interop tests (tests/NetServer.Tests/WebSockets/WsInteropScenarios.cs) against a server
# that echoes every message with its type and answers the text command "close CODE REASON" by
# closing with that code and reason. Runs three scenarios, one connection each, and prints one line
# per scenario, "result {json}", with what websockets itself observed; the test asserts on those:
#   echo         offers the subprotocols "chat-v0" and "superchat" (reports the one chosen) and
#                permessage-deflate unless --no-deflate (with server_no_context_takeover and
#                client_no_context_takeover when --no-context-takeover; reports the extensions
#                accepted and the server's Sec-WebSocket-Extensions answer); sends text and binary
#                messages of 0 B to 1 MiB, and one of each in three frames, and checks that each
#                comes back whole, with its type, in order; sends a ping and waits for the pong
#                with its payload; closes with 1000 "peer done ✓" and reports the close code the
#                server answered with.
#   server-close asks the server to close with 4001 "going away now — à bientôt"; reports code
#                and reason.
#   bad-utf8     sends a text frame that is not UTF-8 (write_frame does not check what it sends);
#                reports the close code the server failed the connection with.
# Exit code 0 when every scenario ran and its own checks held, 1 otherwise; 20 s at most.
# Usage: /usr/bin/python3 ws_interop_client.py ws://127.0.0.1:PORT/ [--no-deflate] [--no-context-takeover] [--ca ca.pem]
import asyncio
import json
import os
import ssl
import sys

import websockets
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.frames import OP_TEXT

NO_CONTEXT_TAKEOVER = "--no-context-takeover" in sys.argv


def report(scenario, **facts):
    print("result " + json.dumps({"scenario": scenario, **facts}), flush=True)


async def open_connection(url, deflate, context, subprotocols=None):
    extensions = None
    if deflate and NO_CONTEXT_TAKEOVER:
        extensions = [ClientPerMessageDeflateFactory(server_no_context_takeover=True, client_no_context_takeover=True)]
    return await websockets.connect(
        url,
        subprotocols=subprotocols,
        extensions=extensions,
        compression="deflate" if deflate else None,
        ssl=context,
        max_size=4 << 20,
        ping_interval=None,
    )


async def echo(url, deflate, context):
    ws = await open_connection(url, deflate, context, ["chat-v0", "superchat"])
    sizes = [0, 1, 125, 126, 65535, 65536, 1 << 20]
    expected = []
    for size in sizes:
        expected.append("t" * size)
        expected.append(bytes([size & 0xFF]) * size)
    for message in expected:
        await ws.send(message)

    # Fragmented: three frames each (each compressed when deflate is on).
    fragmented = [["x" * 2000, "y" * 3000, "\u00e9" * 100], [b"\x01" * 2000, b"\x02" * 3000, b"\x03" * 100]]
    for parts in fragmented:
        await ws.send(parts)
        expected.append(parts[0][:0].join(parts))
    for message in expected:
        got = await ws.recv()
        if type(got) is not type(message):
            raise AssertionError(f"a {type(message).__name__} message of {len(message)} came back as {type(got).__name__}")
        if got != message:
            raise AssertionError(f"a {len(message)}-long message came back as {len(got)} different items")

    # The waiter completes when a pong with this very payload arrives.
    payload = b"are you there?"
    await asyncio.wait_for(await ws.ping(payload), 10)

    await ws.close(1000, "peer done \u2713")
    report(
        "echo",
        protocol=ws.subprotocol,
        extensions=",".join(extension.name for extension in ws.extensions),
        answer=ws.response_headers.get("Sec-WebSocket-Extensions", ""),
        messages=len(expected),
        pong=payload.decode(),
        closeCode=ws.close_code,
    )


async def server_close(url, deflate, context):
    ws = await open_connection(url, deflate, context)
    await ws.send("close 4001 going away now \u2014 \u00e0 bient\u00f4t")
    await ws.wait_closed()
    report("server-close", code=ws.close_code, reason=ws.close_reason)


async def bad_utf8(url, deflate, context):
    ws = await open_connection(url, deflate, context)
    await ws.write_frame(True, OP_TEXT, b"hi\xc3(")
    await ws.wait_closed()
    report("bad-utf8", closeCode=ws.close_code)


async def main():
    url = sys.argv[1]
    deflate = "--no-deflate" not in sys.argv
    context = None
    if "--ca" in sys.argv:
        context = ssl.create_default_context(cafile=sys.argv[sys.argv.index("--ca") + 1])
    try:
        await asyncio.wait_for(run(url, deflate, context), 20)
    except Exception as error:  # any failure is the test's failure: say what it was
        print(f"ws_interop_client: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        # At once: asyncio.run would first wait for the open connections' closing handshakes.
        os._exit(1)


async def run(url, deflate, context):
    await echo(url, deflate, context)
    await server_close(url, deflate, context)
    await bad_utf8(url, deflate, context)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: ws_interop_client.py ws://host:port/path [--no-deflate] [--no-context-takeover] [--ca ca.pem]", file=sys.stderr)
        sys.exit(2)
    asyncio.run(main())
