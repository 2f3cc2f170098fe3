/**
 * Compiles the list kernel (src/upstream/kernel/assembly/) and writes the
 * module that carries it, src/upstream/kernel/wasm.ts. Run with `npm run
 * build:kernel` after changing the kernel's source; a test fails while the
 * module is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KERNEL_MODULE, compileKernel, kernelModuleText } from './kernel-wasm.js';

const root = fileURLToPath(new URL('..', import.meta.url));
process.chdir(root);
const text = kernelModuleText(await compileKernel());
let before = '';
try {
  before = readFileSync(KERNEL_MODULE, 'utf8');
} catch {
  // Written from scratch.
}
if (before === text) console.log(`${KERNEL_MODULE} is up to date`);
else {
  writeFileSync(KERNEL_MODULE, text);
  console.log(`${KERNEL_MODULE} regenerated`);
}
