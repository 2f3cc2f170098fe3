// A separate process of WebSocket clients that subscribe and then never read, so that what they
// hold (their sockets' read buffers) is not counted in the server's memory:
// node staller.mjs <ws url> <connections> '<subscribe message JSON>' ['<another>' …]
// It prints "ready" once every connection completed its handshake and sent its subscribes, then
// holds the sockets (paused, unread) until its stdin closes, and exits.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';

const [url, conns, ...messages] = process.argv.slice(2);
const u = new URL(url);

function frame(text) {
  const payload = Buffer.from(text);
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x81, 0x80 | n]) : Buffer.from([0x81, 0x80 | 126, n >> 8, n & 0xff]);
  const mask = randomBytes(4);
  const body = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) body[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([head, mask, body]);
}

function open() {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: u.hostname, port: Number(u.port) });
    let head = '';
    socket.on('error', reject);
    socket.once('connect', () =>
      socket.write(
        `GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
    const onData = (d) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.pause();
      if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(head.split('\r\n')[0]));
      socket.write(Buffer.concat(messages.map(frame)));
      resolve(socket);
    };
    socket.on('data', onData);
  });
}

const sockets = await Promise.all(Array.from({ length: Number(conns) }, open));
process.stdout.write('ready\n');
process.stdin.resume();
process.stdin.on('end', () => {
  for (const s of sockets) s.destroy();
  process.exit(0);
});
