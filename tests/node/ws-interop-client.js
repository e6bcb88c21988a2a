// An independent WebSocket client (the `ws` package) for the interop tests (tests/NetServer.Tests/
// WebSockets/WsInteropScenarios.cs) against a server that echoes every message with its type
// and answers these text commands: "close CODE REASON" closes with that code and reason.
// Runs three scenarios, one connection each, and prints one line per scenario,
// "result {json}", with what `ws` itself observed; the test asserts on those facts:
//   echo         offers the subprotocols "chat-v0" and "superchat" (reports the one chosen) and
//                permessage-deflate unless --no-deflate (with server_no_context_takeover and
//                client_no_context_takeover when --no-context-takeover; reports the extensions
//                accepted and the server's Sec-WebSocket-Extensions answer); sends text and binary
//                messages of 0 B to 1 MiB, and one of each in three frames (a character split
//                between two), and checks that each comes back whole, with its type, in order;
//                sends a ping and waits for the pong with its payload; closes with 1000
//                "peer done ✓" and reports the close code the server answered with.
//   server-close asks the server to close with 4001 "going away now — à bientôt"; reports code
//                and reason.
//   bad-utf8     sends a text frame that is not UTF-8 (ws does not check what it sends);
//                reports the close code the server failed the connection with.
// Exit code 0 when every scenario ran and its own checks held, 1 otherwise; 20 s at most.
// Usage: node ws-interop-client.js ws://127.0.0.1:PORT/ [--no-deflate] [--no-context-takeover]
// (wss:// trusting a test CA: NODE_EXTRA_CA_CERTS=ca.pem node ws-interop-client.js wss://localhost:PORT/)
'use strict';
const { WebSocket } = require('ws');

const url = process.argv[2];
const deflate = !process.argv.includes('--no-deflate');
const noContextTakeover = process.argv.includes('--no-context-takeover');
if (!url) {
  console.error('usage: node ws-interop-client.js ws://host:port/path [--no-deflate] [--no-context-takeover]');
  process.exit(2);
}

setTimeout(() => fail('timed out'), 20000).unref();

function fail(message) {
  console.error(`ws-interop-client: ${message}`);
  process.exit(1);
}

function report(scenario, facts) {
  console.log('result ' + JSON.stringify({ scenario, ...facts }));
}

function open(protocols) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols, { perMessageDeflate: deflate && (noContextTakeover ? { serverNoContextTakeover: true, clientNoContextTakeover: true } : true) });
    socket.once('upgrade', (response) => { socket.extensionsAnswer = response.headers['sec-websocket-extensions'] || ''; });
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

function closed(socket) {
  return new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') })));
}

async function echo() {
  const socket = await open(['chat-v0', 'superchat']);
  const ended = closed(socket);
  const sizes = [0, 1, 125, 126, 65535, 65536, 1 << 20];
  const expected = [];
  for (const size of sizes) {
    expected.push({ binary: false, data: Buffer.from('t'.repeat(size)) });
    expected.push({ binary: true, data: Buffer.alloc(size, size & 0xff) });
  }

  // Fragmented: three frames each (compressed when deflate is on: the first is over ws' 1 KiB
  // threshold), the text one with a two-byte character split between its second and third frame.
  const accent = Buffer.from('é');
  const textParts = [Buffer.from('x'.repeat(2000)), Buffer.concat([Buffer.from('y'.repeat(3000)), accent.subarray(0, 1)]), Buffer.concat([accent.subarray(1), Buffer.from('z'.repeat(100))])];
  const binaryParts = [Buffer.alloc(2000, 1), Buffer.alloc(3000, 2), Buffer.alloc(100, 3)];
  expected.push({ binary: false, data: Buffer.concat(textParts), parts: textParts });
  expected.push({ binary: true, data: Buffer.concat(binaryParts), parts: binaryParts });

  const echoed = new Promise((resolve, reject) => {
    const waiting = [...expected];
    socket.on('message', (data, isBinary) => {
      const next = waiting.shift();
      if (!next)
        return reject(new Error(`an extra message of ${data.length} bytes`));
      if (next.binary !== isBinary)
        return reject(new Error(`a ${next.binary ? 'binary' : 'text'} message of ${next.data.length} bytes came back as ${isBinary ? 'binary' : 'text'}`));
      if (!next.data.equals(data))
        return reject(new Error(`a ${next.data.length}-byte message came back as ${data.length} different bytes`));
      if (waiting.length === 0)
        resolve();
    });
  });
  for (const message of expected) {
    const parts = message.parts || [message.data];
    parts.forEach((part, i) => socket.send(part, { binary: message.binary, fin: i === parts.length - 1 }));
  }
  await echoed;

  const pong = new Promise((resolve) => socket.once('pong', (data) => resolve(data.toString('utf8'))));
  socket.ping(Buffer.from('are you there?'));
  const pongPayload = await pong;

  socket.close(1000, 'peer done ✓');
  const { code } = await ended;
  report('echo', { protocol: socket.protocol, extensions: socket.extensions, answer: socket.extensionsAnswer, messages: expected.length, pong: pongPayload, closeCode: code });
}

async function serverClose() {
  const socket = await open([]);
  const ended = closed(socket);
  socket.send('close 4001 going away now — à bientôt');
  report('server-close', await ended);
}

async function badUtf8() {
  const socket = await open([]);
  const ended = closed(socket);
  socket.send(Buffer.from([0x68, 0x69, 0xc3, 0x28]), { binary: false });
  report('bad-utf8', { closeCode: (await ended).code });
}

(async () => {
  await echo();
  await serverClose();
  await badUtf8();
  process.exit(0);
})().catch((error) => fail(error.stack || String(error)));
