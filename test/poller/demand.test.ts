import { describe, expect, it } from 'vitest';
import { Demand } from '../../src/poller/demand.js';

describe('Demand', () => {
  it('counts references and reports changes only at 0<->1', () => {
    const d = new Demand();
    const changes: string[] = [];
    d.onChange((c, m) => changes.push(`${c}.${m}`));
    d.add('book', 'kospi', '005930');
    d.add('book', 'kospi', '005930');
    d.remove('book', 'kospi', '005930');
    expect(d.codes('book', 'kospi')).toEqual(new Set(['005930']));
    d.remove('book', 'kospi', '005930');
    expect(d.active('book', 'kospi')).toBe(false);
    d.add('quote', 'kosdaq', '*');
    expect(d.wildcard('quote', 'kosdaq')).toBe(true);
    d.remove('quote', 'kosdaq', '*');
    d.remove('quote', 'kosdaq', '*');
    expect(changes).toEqual(['book.kospi', 'book.kospi', 'quote.kosdaq', 'quote.kosdaq']);
    expect([...d.entries()]).toEqual([]);
  });

  it('reports one change for many codes added or removed together, none when nothing crossed 0<->1', () => {
    const d = new Demand();
    const changes: string[] = [];
    d.onChange((c, m) => changes.push(`${c}.${m}`));
    d.addAll('price', 'kospi', ['005930', '000660', '*']);
    d.addAll('price', 'kospi', ['005930']);
    d.removeAll('price', 'kospi', ['005930', '000660']);
    expect(d.codes('price', 'kospi')).toEqual(new Set(['005930']));
    d.removeAll('price', 'kospi', ['035420']);
    d.removeAll('price', 'kospi', ['005930', '*']);
    expect(d.active('price', 'kospi')).toBe(false);
    expect(changes).toEqual(['price.kospi', 'price.kospi', 'price.kospi']);
  });
});
