import { describe, expect, it } from 'vitest';
import { hotFunctions, type CpuProfile } from '../../bench/lib/profile.js';

describe('hotFunctions', () => {
  it('sums self time per function and ranks it', () => {
    const frame = (functionName: string, url = '', lineNumber = -1) => ({ functionName, url, lineNumber });
    const p: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)') },
        { id: 2, callFrame: frame('apply', 'file:///repo/src/state/store.ts', 41) },
        { id: 3, callFrame: frame('flush', 'file:///repo/src/gateway/session.ts', 0) },
        { id: 4, callFrame: frame('(garbage collector)') },
        { id: 5, callFrame: frame('apply', 'file:///repo/src/state/store.ts', 41) },
      ],
      samples: [2, 3, 2, 4, 5, 2],
      timeDeltas: [1000, 500, 1000, 500, 1000, 0],
    };
    expect(hotFunctions(p, 2, '/repo')).toEqual([
      { fn: 'apply (src/state/store.ts:42)', ms: 3, pct: 75 },
      { fn: 'flush (src/gateway/session.ts)', ms: 0.5, pct: 12.5 },
    ]);
  });
});
