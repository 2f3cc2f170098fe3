import { describe, expect, it } from 'vitest';
import { Turns } from '../../src/replay/turns.js';

describe('Turns', () => {
  it('gives at most max at once, the next in the order asked as each is given back, and counts a turn given back twice once', async () => {
    const t = new Turns(2);
    const order: string[] = [];
    const take = (name: string) =>
      t.take().then((giveBack) => {
        order.push(name);
        return giveBack;
      });
    const [a, b] = await Promise.all([take('a'), take('b')]);
    const c = take('c');
    const d = take('d');
    await Promise.resolve();
    expect([order, t.busy, t.queued]).toEqual([['a', 'b'], 2, 2]);
    a();
    a();
    const giveC = await c;
    expect([order, t.busy, t.queued]).toEqual([['a', 'b', 'c'], 2, 1]);
    b();
    const giveD = await d;
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    giveC();
    giveD();
    expect([t.busy, t.queued]).toEqual([0, 0]);
    // Free again: a turn at once.
    (await take('e'))();
    expect(t.busy).toBe(0);
  });
  it('takes at least one turn at a time', async () => {
    const t = new Turns(0);
    const giveBack = await t.take();
    expect(t.busy).toBe(1);
    giveBack();
    expect(t.busy).toBe(0);
  });
});
