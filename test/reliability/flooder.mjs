// A separate process that floods a bridge with `get` requests and never reads the answers:
// node flooder.mjs <ws url> <connections> <gets each> <resource> <market>
// It prints "ready" once every connection completed its handshake, "sent" once every request is
// written, and holds the sockets (paused, unread) until it is killed.
import { frame, openPaused } from '../hostile/rawws.mjs';

const [url, conns, gets, resource, market] = process.argv.slice(2);

const open = () => openPaused(url);

const sockets = await Promise.all(Array.from({ length: Number(conns) }, open));
process.stdout.write('ready\n');
await new Promise((r) => process.stdin.once('data', r));
for (const s of sockets) {
  const frames = [];
  for (let i = 0; i < Number(gets); i++) frames.push(frame(JSON.stringify({ op: 'get', id: i, resource, market })));
  s.write(Buffer.concat(frames));
}
process.stdout.write('sent\n');
setInterval(() => {}, 1 << 30);
