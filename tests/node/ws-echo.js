// An independent WebSocket peer: connects to the URL given, sends text and binary messages of
// several sizes, and checks that each comes back whole, with its type, in order. Exit code 0 when
// all did, 1 otherwise; 10 s at most. Usage: node tests/node/ws-echo.js ws://127.0.0.1:PORT/ws
// (for wss:// with the repository's test certificate: NODE_EXTRA_CA_CERTS=certs/ca.pem node ...)
'use strict';
const { WebSocket } = require('ws');

const url = process.argv[2];
if (!url) {
  console.error('usage: node ws-echo.js ws://host:port/path');
  process.exit(2);
}

const sizes = [0, 1, 125, 126, 65535, 65536, 1 << 20];
const expected = [];
for (const size of sizes) {
  expected.push({ binary: false, data: Buffer.from('t'.repeat(size)) });
  expected.push({ binary: true, data: Buffer.alloc(size, size & 0xff) });
}

const deadline = setTimeout(() => fail(`timed out with ${expected.length} echoes missing`), 10000);
const socket = new WebSocket(url);

function fail(message) {
  console.error(`ws-echo: ${message}`);
  process.exit(1);
}

socket.on('open', () => {
  for (const message of expected)
    socket.send(message.data, { binary: message.binary });
});

socket.on('message', (data, isBinary) => {
  const next = expected.shift();
  if (next.binary !== isBinary)
    fail(`a ${next.binary ? 'binary' : 'text'} message of ${next.data.length} bytes came back as ${isBinary ? 'binary' : 'text'}`);
  if (!next.data.equals(data))
    fail(`a ${next.data.length}-byte message came back as ${data.length} different bytes`);
  if (expected.length === 0)
    socket.close(1000, 'done');
});

socket.on('close', (code) => {
  clearTimeout(deadline);
  if (expected.length !== 0)
    fail(`closed (${code}) with ${expected.length} echoes missing`);
  console.log(`ws-echo: ${sizes.length * 2} messages echoed, close ${code}`);
});

socket.on('error', (error) => fail(error.message));
