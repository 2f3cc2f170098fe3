// A WebSocket client at the byte level, for test processes that must not read what the server sends:
// masked text frames, and a handshake that leaves the socket paused once upgraded.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';

/** A masked client text frame of `text` (payloads up to 64 KiB). */
export function frame(text) {
  const payload = Buffer.from(text);
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x81, 0x80 | n]) : Buffer.from([0x81, 0x80 | 126, n >> 8, n & 0xff]);
  const mask = randomBytes(4);
  const body = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) body[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([head, mask, body]);
}

/** Connects to the WebSocket at `url`; resolves with the upgraded socket, paused (nothing more is read). */
export function openPaused(url) {
  const u = new URL(url);
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
      resolve(socket);
    };
    socket.on('data', onData);
  });
}
