import { KNOWN_ISSUES, type KnownIssue } from '../data/large-caps.js';
import { ETF_BRANDS, ETF_THEMES, ETF_VARIANTS, ETN_ISSUERS, MIDDLES, PREFIXES, SUFFIXES } from '../data/name-parts.js';
import { isin, krStandardCode } from '../isin.js';
import { Rng, hashString } from '../random.js';
import { floorToGrid, type Grid } from '../ticks.js';

/**
 * The simulated listing: every issue of KOSPI (stocks, ETFs, ETNs on one
 * board), KOSDAQ (with a few foreign issuers) and KONEX, generated once from
 * the seed. Static facts only; prices live in `Market`.
 */

/** Stock market of an issue. */
export type StockMarket = 'kospi' | 'kosdaq' | 'konex';

/** Security group (`secugrpId`). */
export type SecurityGroup = 'ST' | 'EF' | 'EN' | 'FS' | 'RT';

/** One listed issue. */
export interface Issue {
  /** Position in `Universe.issues`. */
  readonly idx: number;
  readonly code: string;
  readonly isin: string;
  readonly market: StockMarket;
  readonly group: SecurityGroup;
  readonly korName: string;
  readonly korAbbrv: string;
  readonly engName: string;
  readonly listDd: string;
  readonly listShrs: number;
  readonly parval: number;
  /** Mid-class industry number (digits of a K/Q code); 0 for funds. */
  readonly sector: number;
  /** Finance lower class (22 bank, 24 securities, 25 insurance) or 0. */
  readonly lowerClass: number;
  /** Market-cap scale code: 2 large, 3 medium, 4 small, 0 not ranked (funds). */
  capClass: number;
  /** Rank by market cap among the equities of its market (1 = largest), 0 for funds. */
  capRank: number;
  /** Reference price level the history oscillates around (KRW). */
  readonly ref: number;
  /** Trades per second in continuous trading. */
  readonly rate: number;
  /** Daily volatility (fraction). */
  readonly sigma: number;
  /** Average share of listed shares traded per day. */
  readonly turnover: number;
  readonly grid: Grid;
  readonly preferred: boolean;
  /** Board suffix of `map_to` and trader-ranking codes. */
  readonly board: string;
  /** Index an ETF tracks (its pdf mirrors the index), if any. */
  readonly tracks?: string;
  /** Hash of the code, the key of all counter-based randomness of the issue. */
  readonly key: number;
}

/** The whole listing. */
export interface Universe {
  readonly issues: readonly Issue[];
  readonly byCode: ReadonlyMap<string, Issue>;
  /** Issues of each market, sorted by code. */
  readonly byMarket: Readonly<Record<StockMarket, readonly Issue[]>>;
}

/** Listing counts by kind. */
export const COUNTS = { kospiStocks: 950, etfs: 1000, etns: 380, kosdaq: 1800, konex: 120 } as const;

const BOARD: Record<StockMarket, string> = { kospi: '001', kosdaq: '003', konex: '004' };
const MANUFACTURING = new Set([5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);

type Draft = Omit<Issue, 'idx' | 'capClass' | 'capRank' | 'key'>;

class Builder {
  readonly drafts: Draft[] = [];
  readonly codes = new Set<string>();
  readonly names = new Set<string>();

  constructor(readonly rng: Rng) {}

  code(make: () => string): string {
    for (;;) {
      const c = make();
      if (!this.codes.has(c)) {
        this.codes.add(c);
        return c;
      }
    }
  }

  uniqueName(make: () => [string, string]): [string, string] {
    for (let i = 0; ; i++) {
      const [kor, eng] = make();
      const k = i < 50 ? kor : `${kor}${i - 49}`;
      if (!this.names.has(k)) {
        this.names.add(k);
        return [k, i < 50 ? eng : `${eng} ${i - 49}`];
      }
    }
  }

  companyName(): [string, string, number, number] {
    let sectors: [number, number] = [26, 12];
    const [kor, eng] = this.uniqueName(() => {
      const p = this.rng.pick(PREFIXES);
      const m = this.rng.pick(MIDDLES);
      const s = this.rng.pick(SUFFIXES);
      sectors = [s[2], s[3]];
      return [`${p[0]}${m[0]}${s[0]}`, [p[1], m[1], s[1]].filter(Boolean).join(' ')];
    });
    return [kor, eng, sectors[0], sectors[1]];
  }

  listDate(fromYear: number): string {
    const y = this.rng.int(fromYear, 2024);
    return `${y}${String(this.rng.int(1, 12)).padStart(2, '0')}${String(this.rng.int(1, 28)).padStart(2, '0')}`;
  }
}

function fromKnown(k: KnownIssue): Draft {
  const fund = k.group === 'EF';
  return {
    code: k.code,
    isin: k.isin ?? krStandardCode(k.code),
    market: k.market,
    group: k.group,
    korName: fund ? `${k.korName}증권상장지수투자신탁(주식)` : k.korName,
    korAbbrv: k.korName,
    engName: k.engName,
    listDd: k.listDd,
    listShrs: k.listShrs,
    parval: k.parval,
    sector: k.sector,
    lowerClass: k.sector === 21 ? 22 : 0,
    ref: k.ref,
    rate: k.rate ?? 1,
    sigma: fund ? 0.011 : 0.024,
    turnover: fund ? 0.02 : 0.003,
    grid: fund ? 'fund' : 'stock',
    preferred: false,
    board: BOARD[k.market],
    ...(k.code === '069500' ? { tracks: 'K51' } : {}),
  };
}

function stock(b: Builder, market: StockMarket, code: string, capRange: [number, number]): Draft {
  const { rng } = b;
  const [kor, eng, kSector, qSector] = b.companyName();
  const ref = rng.chance(0.1) ? rng.logUniform(300, 1_000) : rng.logUniform(1_000, 300_000);
  const cap = rng.logUniform(capRange[0], capRange[1]);
  const sector = market === 'kospi' ? kSector : qSector;
  return {
    code,
    isin: krStandardCode(code),
    market,
    group: 'ST',
    korName: kor,
    korAbbrv: kor,
    engName: eng,
    listDd: b.listDate(market === 'kospi' ? 1956 : market === 'kosdaq' ? 1996 : 2013),
    listShrs: Math.max(100_000, Math.round(cap / ref / 1000) * 1000),
    parval: rng.pick([100, 200, 500, 500, 1000, 5000]),
    sector,
    lowerClass: sector === 21 ? rng.pick([22, 24, 25]) : 0,
    ref: floorToGrid('stock', ref),
    rate: market === 'konex' ? 0.01 : Math.min(3, Math.max(0.02, Math.pow(cap / 1e12, 0.6) * 1.2)),
    sigma: rng.logUniform(0.015, 0.045),
    turnover: rng.logUniform(0.0008, 0.02),
    grid: 'stock',
    preferred: false,
    board: BOARD[market],
  };
}

function kospiStocks(b: Builder, known: number): Draft[] {
  const out: Draft[] = [];
  const target = COUNTS.kospiStocks - known;
  const commons = Math.round(target * 0.94);
  for (let i = 0; i < commons; i++) {
    const letter = i < 6;
    const code = b.code(() =>
      letter
        ? `0${String(b.rng.int(0, 999)).padStart(3, '0')}${b.rng.pick(['A', 'C', 'K', 'L', 'M', 'V'])}0`
        : String(b.rng.int(1, 49_999) * 10).padStart(6, '0'),
    );
    out.push(stock(b, 'kospi', code, [2e10, 6e12]));
  }
  const reits = Math.round(target * 0.015);
  for (let i = 0; i < reits; i++) {
    const code = b.code(() => `${b.rng.int(33, 49)}${String(b.rng.int(0, 999)).padStart(3, '0')}0`);
    const [kor, eng] = b.uniqueName(() => {
      const p = b.rng.pick(PREFIXES);
      return [`${p[0]}리츠`, `${p[1]} REIT`];
    });
    out.push({
      ...stock(b, 'kospi', code, [5e10, 8e11]),
      group: 'RT',
      korName: kor,
      korAbbrv: kor,
      engName: eng,
      sector: 21,
      lowerClass: 0,
      ref: floorToGrid('stock', b.rng.logUniform(3000, 6000)),
    });
  }
  // Preferred shares share their common's code with a last digit of 5.
  const commonsSoFar = out.filter((d) => d.group === 'ST' && d.code.endsWith('0') && /^\d+$/.test(d.code));
  for (let i = 0; out.length < target; i++) {
    const base = commonsSoFar[i % commonsSoFar.length]!;
    const code = `${base.code.slice(0, 5)}5`;
    if (b.codes.has(code)) continue;
    b.codes.add(code);
    out.push({
      ...base,
      code,
      isin: krStandardCode(code),
      korName: `${base.korName}1우선주`,
      korAbbrv: `${base.korAbbrv}우`,
      engName: `${base.engName}(1P)`,
      listShrs: Math.round(base.listShrs / 10 / 1000) * 1000 || 10_000,
      ref: floorToGrid('stock', base.ref * 0.8),
      rate: base.rate / 5,
      preferred: true,
    });
  }
  return out;
}

function etfs(b: Builder, count: number): Draft[] {
  const out: Draft[] = [];
  for (let i = 0; i < count; i++) {
    const code = b.code(() => `${b.rng.int(1, 4)}${String(b.rng.int(0, 9999)).padStart(4, '0')}0`);
    let tracks: string | undefined;
    const [kor, eng] = b.uniqueName(() => {
      const brand = b.rng.pick(ETF_BRANDS);
      const theme = b.rng.pick(ETF_THEMES);
      const variant = b.rng.pick(ETF_VARIANTS);
      tracks = theme[0] === '200' && variant[0] === '' ? 'K51' : theme[0] === '코스닥150' ? 'Q203' : theme[0] === 'KRX300' ? 'S300' : undefined;
      return [`${brand} ${theme[0]}${variant[0]}`, `${brand} ${theme[1]}${variant[1]}`];
    });
    const ref = b.rng.chance(0.08) ? b.rng.logUniform(50_000, 110_000) : b.rng.logUniform(5_000, 50_000);
    out.push({
      code,
      isin: krStandardCode(code),
      market: 'kospi',
      group: 'EF',
      korName: `${kor}증권상장지수투자신탁`,
      korAbbrv: kor,
      engName: eng,
      listDd: b.listDate(2006),
      listShrs: Math.round(b.rng.logUniform(3e5, 5e7) / 1000) * 1000,
      parval: 0,
      sector: 0,
      lowerClass: 0,
      ref: floorToGrid('fund', ref),
      rate: b.rng.logUniform(0.03, 1),
      sigma: b.rng.logUniform(0.004, 0.02),
      turnover: b.rng.logUniform(0.002, 0.05),
      grid: 'fund',
      preferred: false,
      board: BOARD.kospi,
      ...(tracks ? { tracks } : {}),
    });
  }
  return out;
}

function etns(b: Builder, count: number): Draft[] {
  const out: Draft[] = [];
  for (let i = 0; i < count; i++) {
    const code = b.code(() => `5${String(b.rng.int(0, 99_999)).padStart(5, '0')}`);
    let full = '';
    const [kor, eng] = b.uniqueName(() => {
      const issuer = b.rng.pick(ETN_ISSUERS);
      const theme = b.rng.pick(ETF_THEMES);
      const hedged = b.rng.chance(0.3) ? '(H)' : '';
      full = `${issuer[0]}투자증권 ${theme[0]} 상장지수증권${hedged}`;
      return [`${issuer[0]} ${theme[0]} ETN${hedged}`, `${issuer[1]} ${theme[1]} ETN${hedged}`];
    });
    out.push({
      code,
      isin: krStandardCode(code),
      market: 'kospi',
      group: 'EN',
      korName: full,
      korAbbrv: kor,
      engName: eng,
      listDd: b.listDate(2014),
      listShrs: Math.round(b.rng.logUniform(1e6, 2e7) / 1000) * 1000,
      parval: 0,
      sector: 0,
      lowerClass: 0,
      ref: floorToGrid('fund', b.rng.logUniform(2_000, 30_000)),
      rate: b.rng.logUniform(0.005, 0.2),
      sigma: b.rng.logUniform(0.01, 0.04),
      turnover: b.rng.logUniform(0.001, 0.03),
      grid: 'fund',
      preferred: false,
      board: BOARD.kospi,
    });
  }
  return out;
}

function foreignIssuer(b: Builder): Draft {
  const code = b.code(() => `${b.rng.pick(['900', '950'])}${String(b.rng.int(0, 99) * 10).padStart(3, '0')}`);
  const [kor, eng] = b.uniqueName(() => {
    const p = b.rng.pick(PREFIXES);
    const s = b.rng.pick([
      ['홀딩스', 'HOLDINGS'],
      ['그룹', 'GROUP'],
      ['인터내셔널', 'INTERNATIONAL'],
    ] as const);
    return [`${p[0]}${s[0]}`, `${p[1]} ${s[1]}`];
  });
  const prefix = b.rng.pick(['HK', 'KYG', 'US']);
  const body = prefix + String(b.rng.int(0, 10 ** (11 - prefix.length) - 1)).padStart(11 - prefix.length, '0');
  return { ...stock(b, 'kosdaq', code, [2e10, 3e11]), group: 'FS', isin: isin(body), korName: kor, korAbbrv: kor, engName: eng, parval: 0 };
}

function kosdaq(b: Builder, known: number): Draft[] {
  const out: Draft[] = [];
  for (let i = 0; i < 9; i++) out.push(foreignIssuer(b));
  while (out.length < COUNTS.kosdaq - known) {
    const letter = out.length < 20;
    const code = b.code(() =>
      letter
        ? `0${String(b.rng.int(0, 999)).padStart(3, '0')}${b.rng.pick(['D', 'F', 'N', 'P', 'R', 'T', 'W'])}0`
        : String(b.rng.int(1, 39_999) * 10).padStart(6, '0'),
    );
    out.push(stock(b, 'kosdaq', code, [1e10, 2e12]));
  }
  return out;
}

function rank(issues: Issue[]): void {
  for (const market of ['kospi', 'kosdaq', 'konex'] as const) {
    const eq = issues
      .filter((i) => i.market === market && (i.group === 'ST' || i.group === 'FS' || i.group === 'RT'))
      .sort((a, b) => b.ref * b.listShrs - a.ref * a.listShrs);
    eq.forEach((i, n) => {
      i.capRank = n + 1;
      i.capClass = n < 100 ? 2 : n < 400 ? 3 : 4;
    });
  }
}

const CACHE = new Map<number, Universe>();

/** The listing for a seed (built once per seed and shared: it is immutable). */
export function universeFor(seed: number): Universe {
  let u = CACHE.get(seed);
  if (!u) {
    u = buildUniverse(seed);
    CACHE.set(seed, u);
  }
  return u;
}

/** Builds the listing for a seed; the same seed always gives the same listing. */
export function buildUniverse(seed: number): Universe {
  const b = new Builder(new Rng(seed ^ 0x5eed));
  for (const k of KNOWN_ISSUES) b.codes.add(k.code);
  const known = KNOWN_ISSUES.map(fromKnown);
  for (const k of known) b.names.add(k.korAbbrv);
  const countKnown = (m: StockMarket, g: SecurityGroup[]) => known.filter((k) => k.market === m && g.includes(k.group)).length;
  const drafts: Draft[] = [
    ...known,
    ...kospiStocks(b, countKnown('kospi', ['ST'])),
    ...etfs(b, COUNTS.etfs - countKnown('kospi', ['EF'])),
    ...etns(b, COUNTS.etns),
    ...kosdaq(b, countKnown('kosdaq', ['ST', 'FS'])),
  ];
  for (let i = 0; i < COUNTS.konex; i++) {
    const code = b.code(() => String(b.rng.int(20_000, 29_999) * 10).padStart(6, '0'));
    drafts.push(stock(b, 'konex', code, [3e9, 8e10]));
  }
  const issues: Issue[] = drafts.map((d, idx) => ({ ...d, idx, capClass: 0, capRank: 0, key: hashString(d.code) ^ seed }));
  rank(issues);
  const byMarket: Record<StockMarket, Issue[]> = { kospi: [], kosdaq: [], konex: [] };
  for (const i of issues) byMarket[i.market].push(i);
  for (const list of Object.values(byMarket)) list.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  return { issues, byCode: new Map(issues.map((i) => [i.code, i])), byMarket };
}

/** True for issues of the manufacturing industries (`mfindYn`). */
export function isManufacturing(issue: Issue): boolean {
  return issue.market === 'kospi' && issue.group === 'ST' && MANUFACTURING.has(issue.sector);
}

/** True for equities (stocks, foreign stocks, REITs), false for ETFs and ETNs. */
export function isEquity(issue: Issue): boolean {
  return issue.group === 'ST' || issue.group === 'FS' || issue.group === 'RT';
}
