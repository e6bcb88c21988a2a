// An independent WebSocket server (the `ws` package) for the interop tests of our clients
// (tests/NetServer.Tests/WebSockets/WsInteropScenarios.cs). Listens on 127.0.0.1, port 0,
// and prints "listening PORT"; exits when its stdin closes (the test ended). Per connection:
//   - speaks the subprotocol "superchat" when the client offers it (none otherwise);
//   - permessage-deflate when started with --deflate (threshold 0: every message compressed);
//   - echoes every message with its type, except these text commands:
//       "close CODE REASON"  closes with that code and reason;
//       "ping PAYLOAD"       sends a ping with that payload and, once the matching pong arrives,
//                            the text "pong PAYLOAD";
//       "info"               sends {"protocol": ..., "extensions": ..., "answer": ...}: the subprotocol and
//                            extensions as this side agreed to them, and its Sec-WebSocket-Extensions answer.
// Usage: node ws-interop-server.js [--deflate] [--tls cert.pem key.pem]
'use strict';
const fs = require('fs');
const http = require('http');
const https = require('https');
const { WebSocketServer } = require('ws');

const args = process.argv.slice(2);
const tls = args.indexOf('--tls');
const server = tls >= 0
  ? https.createServer({ cert: fs.readFileSync(args[tls + 1]), key: fs.readFileSync(args[tls + 2]) })
  : http.createServer();
const wss = new WebSocketServer({
  server,
  maxPayload: 4 << 20,
  perMessageDeflate: args.includes('--deflate') ? { threshold: 0 } : false,
  handleProtocols: (protocols) => (protocols.has('superchat') ? 'superchat' : false),
});

// The answer's Sec-WebSocket-Extensions line, kept with the request it answers for "info".
wss.on('headers', (headers, request) => {
  const line = headers.find((header) => header.toLowerCase().startsWith('sec-websocket-extensions:'));
  request.extensionsAnswer = line ? line.slice(line.indexOf(':') + 1).trim() : '';
});

wss.on('connection', (socket, request) => {
  socket.on('message', (data, isBinary) => {
    const text = isBinary ? '' : data.toString('utf8');
    if (text.startsWith('close ')) {
      const [, code, ...reason] = text.split(' ');
      socket.close(Number(code), reason.join(' '));
    } else if (text.startsWith('ping ')) {
      const payload = text.slice(5);
      socket.once('pong', (pong) => socket.send(`pong ${pong.toString('utf8')}`));
      socket.ping(payload);
    } else if (text === 'info') {
      socket.send(JSON.stringify({ protocol: socket.protocol, extensions: socket.extensions, answer: request.extensionsAnswer }));
    } else {
      socket.send(data, { binary: isBinary });
    }
  });
  socket.on('error', (error) => console.error(`ws-interop-server: ${error.message}`));
});

server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
