import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SymbolLoader } from '../../src/bridge/symbols.js';
import { silentLogger } from '../../src/log.js';
import { SymbolDirectory } from '../../src/state/symbols.js';
import type { OnDemandCache } from '../../src/upstream/cache.js';

/**
 * The symbol lists kept on disk: a restart before the day's lists are
 * provided (the upstream answers 400 until 06:30 KST) shows the names of
 * the last lists, without refusing a code they lack.
 */

const FRIDAY = Date.parse('2026-11-27T10:00:00+09:00');
const SATURDAY_NIGHT = Date.parse('2026-11-28T03:00:00+09:00');

const row = (code: string, name: string) => ({ isuSrtCd: code, isuCd: `KR7${code}003`, isuKorNm: name, isuKorAbbrv: name, mktNm: 'KOSPI', lstShrCnt: 1 });
const LISTS: Record<string, Record<string, unknown>[]> = {
  kospi: [row('005930', '삼성전자'), row('000660', 'SK하이닉스')],
  kosdaq: [row('247540', '에코프로비엠')],
};

/** A cache whose list answers come from `answer` (a failure throws, as the upstream's 400 before its provision time). */
function cache(answer: (market: string) => Record<string, unknown>[] | Error): OnDemandCache {
  return {
    get: (_id: string, params: Record<string, unknown>) => {
      const a = answer(String(params.marketcode));
      return a instanceof Error ? Promise.reject(a) : Promise.resolve({ data: { isuLists: a }, receivedAt: 0, cached: false });
    },
  } as unknown as OnDemandCache;
}

const families = { kospi: 'v2', kosdaq: 'v2' } as const;

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('symbol lists kept on disk', () => {
  it('keeps each list loaded, and a start that cannot load the day’s shows the kept names until it can', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-symbols-'));
    // Friday: the lists load, and are kept.
    const friday = new SymbolDirectory();
    const first = new SymbolLoader({ symbols: friday, cache: cache((m) => LISTS[m]!), families, logger: silentLogger(), now: () => FRIDAY, dir });
    first.start();
    await until(() => existsSync(join(dir, 'symbols-kosdaq.json')));
    first.stop();
    const kept = JSON.parse(readFileSync(join(dir, 'symbols-kospi.json'), 'utf8')) as { at: number; rows: unknown[] };
    // Only what the directory reads is kept.
    expect(kept).toEqual({
      at: FRIDAY,
      rows: LISTS.kospi!.map(({ isuSrtCd, isuCd, isuKorNm, isuKorAbbrv }) => ({ isuSrtCd, isuCd, isuKorNm, isuKorAbbrv })),
    });

    // Saturday night: the upstream has no list at this hour.
    let provided = false;
    const night = new SymbolDirectory();
    const notYet = new Error('당일 종가 데이터 제공시간이 아닙니다.');
    const second = new SymbolLoader({
      symbols: night,
      cache: cache((m) => (provided ? [...LISTS[m]!, row('999990', '새상장')] : notYet)),
      families,
      logger: silentLogger(),
      now: () => SATURDAY_NIGHT,
      dir,
      retryMs: 20,
    });
    second.start();
    expect(night.get('kospi', '005930')?.name).toBe('삼성전자');
    expect(night.loadedTime('kospi')).toBe(FRIDAY);
    // A code the kept list lacks (listed since) is not refused for it.
    expect(night.has('kospi', '999990')).toBe(true);
    // The day's list replaces it once provided, and judges codes again.
    provided = true;
    await until(() => night.loadedTime('kospi') === SATURDAY_NIGHT && night.loadedTime('kosdaq') === SATURDAY_NIGHT);
    second.stop();
    expect(night.get('kospi', '999990')?.name).toBe('새상장');
    expect(night.has('kospi', '123450')).toBe(false);
  });

  it('starts without a kept list, or with one it cannot read, as before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-symbols-'));
    const symbols = new SymbolDirectory();
    const loader = new SymbolLoader({
      symbols,
      cache: cache(() => new Error('down')),
      families,
      logger: silentLogger(),
      now: () => FRIDAY,
      dir,
      retryMs: 10_000,
    });
    loader.start();
    loader.stop();
    expect(symbols.loaded('kospi')).toBe(false);
    expect(symbols.has('kospi', '005930')).toBe(true);
  });
});
