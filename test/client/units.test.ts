import { afterEach, describe, expect, it, vi } from 'vitest';
import { GuardedEmitter } from '../../src/client/events.js';
import { KrxError, isKrxError } from '../../src/client/errors.js';
import { Outbox } from '../../src/client/outbox.js';
import { Subscriptions } from '../../src/client/subscriptions.js';

describe('Outbox', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends a burst at once, then paces the rest at the rate, in order', () => {
    vi.useFakeTimers();
    const sent: string[] = [];
    const box = new Outbox((t) => sent.push(t), { rate: 10, burst: 3, now: () => Date.now() });
    for (let i = 0; i < 8; i++) box.push(String(i));
    expect(sent).toEqual(['0', '1', '2']);
    expect(box.size).toBe(5);
    vi.advanceTimersByTime(100);
    expect(sent).toEqual(['0', '1', '2', '3']);
    vi.advanceTimersByTime(400);
    expect(sent).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
    expect(box.size).toBe(0);
  });

  it('clear drops what waits and refills the bucket', () => {
    vi.useFakeTimers();
    const sent: string[] = [];
    const box = new Outbox((t) => sent.push(t), { rate: 1, burst: 1, now: () => Date.now() });
    box.push('a');
    box.push('b');
    box.clear();
    vi.advanceTimersByTime(5000);
    expect(sent).toEqual(['a']);
    box.push('c');
    expect(sent).toEqual(['a', 'c']);
  });

  it('setRate applies to what follows', () => {
    vi.useFakeTimers();
    const sent: string[] = [];
    const box = new Outbox((t) => sent.push(t), { rate: 1, burst: 1, now: () => Date.now() });
    box.push('a');
    box.setRate(100, 1);
    box.push('b');
    vi.advanceTimersByTime(10);
    expect(sent).toEqual(['a', 'b']);
  });
});

describe('Subscriptions', () => {
  it('adds and reports only what is new; revert undoes exactly that', () => {
    const s = new Subscriptions();
    expect(s.add('quote', 'kospi', ['005930', '000660'])).toEqual({ wildcard: false, codes: ['005930', '000660'] });
    const again = s.add('quote', 'kospi', ['005930', '035420', '*']);
    expect(again).toEqual({ wildcard: true, codes: ['035420'] });
    s.revert('quote', 'kospi', again);
    expect(s.list()).toEqual([{ channel: 'quote', market: 'kospi', wildcard: false, codes: ['005930', '000660'] }]);
  });

  it('covers a topic by code or by wildcard; an emptied feed is forgotten', () => {
    const s = new Subscriptions();
    s.add('book', 'kospi', ['005930']);
    s.add('quote', 'kosdaq', ['*']);
    expect(s.covers({ channel: 'book', market: 'kospi', code: '005930' })).toBe(true);
    expect(s.covers({ channel: 'book', market: 'kospi', code: '000660' })).toBe(false);
    expect(s.covers({ channel: 'quote', market: 'kosdaq', code: '247540' })).toBe(true);
    expect(s.has('quote', 'kosdaq', '*')).toBe(true);
    s.remove('quote', 'kosdaq', ['*']);
    s.remove('book', 'kospi', ['005930']);
    expect(s.list()).toEqual([]);
  });

  it('plans one subscribe per feed; the wildcard goes alone; big feeds split at 1000 codes; skip leaves codes out', () => {
    const s = new Subscriptions();
    s.add('quote', 'kospi', ['*', '005930']);
    s.add('book', 'kospi', ['005930', '000660']);
    const many = Array.from({ length: 1500 }, (_, i) => String(i).padStart(6, '0'));
    s.add('price', 'kosdaq', many);
    const plan = s.plan((channel, _m, code) => channel === 'book' && code === '000660');
    expect(plan.map((p) => [p.channel, p.market, p.codes.length])).toEqual([
      ['quote', 'kospi', 1],
      ['quote', 'kospi', 1],
      ['book', 'kospi', 1],
      ['price', 'kosdaq', 1000],
      ['price', 'kosdaq', 500],
    ]);
    expect(plan[0]!.codes).toEqual(['*']);
    expect(plan[2]!.codes).toEqual(['005930']);
  });
});

class Probe extends GuardedEmitter<{ tick: (n: number) => void; error: (e: unknown) => void }> {
  readonly failures: [unknown, string][] = [];
  fire(n: number): void {
    this.emit('tick', n);
  }
  protected listenerFailed(error: unknown, event: string): void {
    this.failures.push([error, event]);
  }
}

describe('GuardedEmitter', () => {
  it('a throwing listener neither stops the others nor escapes emit', () => {
    const p = new Probe();
    const got: string[] = [];
    p.on('tick', (n) => got.push(`a${n}`));
    p.on('tick', () => {
      throw new Error('x');
    });
    p.on('tick', (n) => got.push(`c${n}`));
    expect(() => p.fire(1)).not.toThrow();
    expect(got).toEqual(['a1', 'c1']);
    expect(p.failures).toHaveLength(1);
    expect(p.failures[0]![1]).toBe('tick');
  });

  it('once fires once; off removes by the function given to on', () => {
    const p = new Probe();
    const got: number[] = [];
    const f = (n: number) => got.push(n);
    p.once('tick', (n) => got.push(n * 10));
    p.on('tick', f);
    p.fire(1);
    p.fire(2);
    p.off('tick', f);
    p.fire(3);
    expect(got).toEqual([10, 1, 2]);
    expect(p.listenerCount('tick')).toBe(0);
  });
});

describe('KrxError', () => {
  it('carries code, retryable (from the tables unless given), topic and cause', () => {
    const cause = new Error('root');
    const e = new KrxError('upstream_unavailable', 'down', { cause, topic: 'quote.kospi.005930' });
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ name: 'KrxError', code: 'upstream_unavailable', retryable: true, topic: 'quote.kospi.005930' });
    expect(e.cause).toBe(cause);
    expect(new KrxError('invalid_code', 'x').retryable).toBe(false);
    expect(new KrxError('timeout', 'x').retryable).toBe(true);
    expect(new KrxError('closed', 'x').retryable).toBe(false);
    expect(new KrxError('internal', 'x', { retryable: false }).retryable).toBe(false);
    expect(isKrxError(e)).toBe(true);
    expect(isKrxError(new Error('x'))).toBe(false);
  });
});
