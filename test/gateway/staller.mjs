// A separate process of WebSocket clients that subscribe and then never read, so that what they
// hold (their sockets' read buffers) is not counted in the server's memory:
// node staller.mjs <ws url> <connections> '<subscribe message JSON>' ['<another>' …]
// It prints "ready" once every connection completed its handshake and sent its subscribes, then
// holds the sockets (paused, unread) until its stdin closes, and exits.
import { frame, openPaused } from '../hostile/rawws.mjs';

const [url, conns, ...messages] = process.argv.slice(2);

async function open() {
  const socket = await openPaused(url);
  socket.write(Buffer.concat(messages.map(frame)));
  return socket;
}

const sockets = await Promise.all(Array.from({ length: Number(conns) }, open));
process.stdout.write('ready\n');
process.stdin.resume();
process.stdin.on('end', () => {
  for (const s of sockets) s.destroy();
  process.exit(0);
});
