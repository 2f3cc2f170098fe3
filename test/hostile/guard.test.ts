import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { EXIT_INTERNAL_ERROR, installProcessGuard } from '../../src/guard.js';
import { createLogger } from '../../src/log.js';

function setup() {
  const proc = new EventEmitter();
  const counted: string[] = [];
  const exits: number[] = [];
  let stops = 0;
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(l) } });
  const remove = installProcessGuard(
    {
      logger,
      count: (k) => counted.push(k),
      stop: async () => void stops++,
      exit: (c) => void exits.push(c),
    },
    proc,
  );
  return { proc, counted, exits, lines, remove, stops: () => stops };
}

describe('process guard', () => {
  it('logs and counts an unhandled rejection and keeps serving', () => {
    const g = setup();
    g.proc.emit('unhandledRejection', new Error('boom'), Promise.resolve());
    expect(g.counted).toEqual(['unhandled_rejection']);
    expect(g.exits).toEqual([]);
    expect(g.stops()).toBe(0);
    expect(g.lines.join('')).toMatch(/unhandled promise rejection; still serving/);
  });

  it('drains once and exits 70 after an uncaught exception', async () => {
    const g = setup();
    g.proc.emit('uncaughtException', new Error('bug'));
    g.proc.emit('uncaughtException', new Error('another'));
    await new Promise((r) => setImmediate(r));
    expect(g.counted).toEqual(['uncaught_exception', 'uncaught_exception']);
    expect(g.stops()).toBe(1);
    expect(g.exits).toEqual([EXIT_INTERNAL_ERROR]);
    expect(g.lines.join('')).toMatch(/uncaught exception; draining and exiting/);
    g.remove();
    expect(g.proc.listenerCount('uncaughtException')).toBe(0);
  });
});
