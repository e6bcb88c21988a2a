# An independent WebSocket server (python3-websockets, Debian's package for /usr/bin/python3) for
# the interop tests of our clients (tests/NetServer.Tests/WebSockets/WsInteropScenarios.cs).
# Listens on 127.0.0.1, port 0, and prints "listening PORT"; exits when its stdin closes (the test
# ended). Per connection:
#   - speaks the subprotocol "superchat" when the client offers it (none otherwise);
#   - permessage-deflate when started with --deflate (websockets' defaults: it answers
#     server_max_window_bits=12, so our client inflates a 12-bit window);
#   - echoes every message with its type, except these text commands:
#       "close CODE REASON"  closes with that code and reason;
#       "ping PAYLOAD"       sends a ping with that payload and, once the matching pong arrives,
#                            the text "pong PAYLOAD";
#       "info"               sends {"protocol": ..., "extensions": ..., "answer": ...}: the subprotocol and
#                            extensions as this side agreed to them, and its Sec-WebSocket-Extensions answer.
# Usage: /usr/bin/python3 ws_interop_server.py [--deflate] [--tls cert.pem key.pem]
import asyncio
import json
import os
import ssl
import sys
import threading

import websockets


async def ping_and_report(ws, payload):
    await asyncio.wait_for(await ws.ping(payload.encode()), 10)
    await ws.send("pong " + payload)


async def handle(ws, path):
    tasks = set()
    try:
        async for message in ws:
            if isinstance(message, str) and message.startswith("close "):
                _, code, reason = message.split(" ", 2)
                await ws.close(int(code), reason)
            elif isinstance(message, str) and message.startswith("ping "):
                task = asyncio.create_task(ping_and_report(ws, message[5:]))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            elif message == "info":
                names = ",".join(extension.name for extension in ws.extensions)
                answer = ws.response_headers.get("Sec-WebSocket-Extensions", "")
                await ws.send(json.dumps({"protocol": ws.subprotocol, "extensions": names, "answer": answer}))
            else:
                await ws.send(message)
    except websockets.ConnectionClosed:
        pass


def exit_when_stdin_closes():
    sys.stdin.read()
    os._exit(0)


async def main():
    context = None
    if "--tls" in sys.argv:
        at = sys.argv.index("--tls")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[at + 1], sys.argv[at + 2])
    server = await websockets.serve(
        handle,
        "127.0.0.1",
        0,
        subprotocols=["superchat"],
        compression="deflate" if "--deflate" in sys.argv else None,
        ssl=context,
        max_size=4 << 20,
        ping_interval=None,
    )
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.Future()


if __name__ == "__main__":
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    asyncio.run(main())
