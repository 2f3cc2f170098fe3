// What one write to a loopback TCP socket costs the writing process, by the size of the write: 1,000 connections to a reader
// in another process, 50 rounds of one write to each (20 ms apart, so the reader keeps up), process CPU per write.
// Why a fan-out that writes each client one frame per poll rather than one per update pays per write, not per byte.
// Run: node --import tsx bench/socket-writes.ts
import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const CONNECTIONS = 1000;
const ROUNDS = 50;

if (process.argv[2] === 'reader') {
  const server = net.createServer((s) => s.resume());
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as net.AddressInfo).port));
} else {
  const reader = fork(fileURLToPath(import.meta.url), ['reader']);
  const port = await new Promise<number>((resolve) => reader.once('message', (m) => resolve(m as number)));
  const sockets = await Promise.all(
    Array.from(
      { length: CONNECTIONS },
      () =>
        new Promise<net.Socket>((resolve) => {
          const s = net.connect(port, '127.0.0.1', () => resolve(s));
          s.setNoDelay(true);
        }),
    ),
  );
  for (const size of [200, 1500, 3000, 6000, 1500, 200]) {
    const data = Buffer.alloc(size, 0x61);
    const before = process.cpuUsage();
    for (let r = 0; r < ROUNDS; r++) {
      for (const s of sockets) s.write(data);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const used = process.cpuUsage(before);
    const writes = CONNECTIONS * ROUNDS;
    console.log(
      `${String(size).padStart(5)} bytes: ${((used.user + used.system) / writes).toFixed(2)} µs of CPU per write (user ${(used.user / writes).toFixed(2)}, system ${(used.system / writes).toFixed(2)})`,
    );
  }
  for (const s of sockets) s.destroy();
  reader.kill();
}
