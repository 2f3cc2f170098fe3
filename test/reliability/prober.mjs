// A separate process that asks a bridge's /healthz over and over, as a load balancer's probe
// would, and prints each answer's time: node prober.mjs <http url> <pace ms>
// One line per answer, "<epoch ms at the ask> <ms to the whole answer>", until it is killed.
import { request } from 'undici';

const [url, pace] = process.argv.slice(2);

for (;;) {
  const at = Date.now();
  const t0 = performance.now();
  const r = await request(`${url}/healthz`);
  await r.body.dump();
  process.stdout.write(`${at} ${(performance.now() - t0).toFixed(2)}\n`);
  await new Promise((resolve) => setTimeout(resolve, Number(pace)));
}
