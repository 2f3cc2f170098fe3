import { KrxCalendar } from '../../market/calendar.js';
import { REGULAR_HOURS, Sessions, phaseOf, type DayHours, type Phase } from '../../market/session.js';
import { dayNumber, type KstTime } from '../calendar.js';
import { KNOWN_ISSUES } from '../data/large-caps.js';
import { unit } from '../random.js';
import { roundToGrid, tickDown, tickUp, type Grid } from '../ticks.js';
import { BarSeries, type Bar } from './bars.js';
import { dayPathBars, type PriceGrid } from './daypath.js';
import {
  CONTINUOUS_CODE,
  initialContractLive,
  listContracts,
  stepContract,
  theoretical,
  gridPrice,
  yearsTo,
  type Contract,
  type ContractLive,
} from './derivatives.js';
import { closeOn, dailyBar, type DayBar, type Overrides, type SeriesSpec } from './history.js';
import { INDEX_GRID, buildIndexes, initialIndexLive, updateIndex, type IndexDef, type IndexLive, type Quotes } from './indexes.js';
import { universeFor, type Issue, type Universe } from './universe.js';
import { applyStep, dayParams, initialLive, type DayParams, type Live, type Step, type StepKind } from './walk.js';

/**
 * The simulated market: the listing, one session day of live state per
 * issue, index and contract, and the steps taken so far that day. `advance`
 * moves it to a KST time, stepping through the sessions it crosses (in
 * 2-minute steps when it has to catch up, 15-second steps over the last
 * half hour) and rolling the day at the pre-market (08:30, later on a
 * late-open day). Its days and hours are the KRX sessions of src/market.
 */

/** Longest gap between two steps when catching up, in seconds. */
export const CATCH_UP_STEP = 120;
/** Gap between catch-up steps over the last `FINE_WINDOW` seconds, so recent intraday bars look traded. */
export const FINE_STEP = 15;
/** How far back from the target time catch-up uses `FINE_STEP`, in seconds. */
export const FINE_WINDOW = 1800;

/** Days of live-traded bars kept for history. */
const KEEP_DAYS = 10;

/** Which intraday bars a date has: the session day's live ones, a past trading day's synthesised ones, or none. */
export type BarDay = 'live' | 'past' | 'none';

/** Shares held in the market per issue index. */
type PerIssue<T> = T[];

/** Session date whose data the market holds at a KST time (the day rolls at the pre-market). */
export function sessionDateFor(t: KstTime, sessions: Sessions): string {
  const h = sessions.hours(t.date);
  return h !== undefined && t.secs >= h.pre ? t.date : sessions.calendar.prevTradingDay(t.date);
}

interface Range {
  readonly from: number;
  readonly to: number;
}

function schedule(r: Range, h: DayHours): [number, StepKind][] {
  const out: [number, StepKind][] = [];
  const range = (a: number, b: number, kind: StepKind) => {
    const lo = Math.max(r.from, a);
    const hi = Math.min(r.to, b);
    if (hi <= lo) return;
    let t = lo;
    const step = () => (r.to - t <= FINE_WINDOW ? FINE_STEP : CATCH_UP_STEP);
    while (hi - t > step()) {
      t += step();
      out.push([t, kind]);
    }
    if (t < hi) out.push([hi, kind]);
  };
  range(h.open, h.closingAuction, 'cont');
  if (r.from < h.close && r.to >= h.close) out.push([h.close, 'close']);
  range(h.afterClose, h.single, 'atclose');
  for (let m = h.single + 600; m <= h.end; m += 600) if (r.from < m && r.to >= m) out.push([m, 'single']);
  return out;
}

/** The simulated market. */
export class Market {
  readonly universe: Universe;
  readonly indexDefs: readonly IndexDef[];
  readonly indexByCode: ReadonlyMap<string, IndexDef>;
  /** Session date (`YYYYMMDD`) of the live state. */
  sessionDate = '';
  /** Market time of the last `advance`. */
  time: KstTime;
  /** Increases on every change, so bodies can be cached per generation. */
  generation = 0;
  params: PerIssue<DayParams> = [];
  live: PerIssue<Live> = [];
  indexLive = new Map<string, IndexLive>();
  contracts: Contract[] = [];
  contractLive = new Map<string, ContractLive>();
  /** Steps taken this session day, oldest first. */
  readonly steps: Step[] = [];
  /** True once the closing auction has run this session day. */
  closed = false;
  /** The hours of the session date. */
  hours: DayHours = REGULAR_HOURS;
  private cursor = REGULAR_HOURS.pre;
  private lastCont = REGULAR_HOURS.open;
  private lastAtClose = REGULAR_HOURS.afterClose;
  private readonly issueDays = new Map<string, DayBar[]>();
  private readonly indexDays = new Map<string, Map<string, DayBar>>();
  private readonly traded: readonly Issue[];
  private readonly quotes: Quotes;

  /** A market for `seed` trading on `sessions` (default: the KRX calendar without operator closures), caught up to the KST time `start`. */
  constructor(
    readonly seed: number,
    start: KstTime,
    readonly sessions: Sessions = new Sessions(new KrxCalendar()),
  ) {
    this.universe = universeFor(seed);
    this.indexDefs = buildIndexes(this.universe, seed, sessions.calendar);
    this.indexByCode = new Map(this.indexDefs.map((d) => [d.code, d]));
    this.traded = this.universe.issues.filter((i) => i.market !== 'konex');
    const n = this.universe.issues.length;
    this.quotes = {
      base: new Float64Array(n),
      shares: Float64Array.from(this.universe.issues, (i) => i.listShrs),
      last: new Float64Array(n),
      vol: new Float64Array(n),
      val: new Float64Array(n),
    };
    const date = sessionDateFor(start, sessions);
    this.time = { date, secs: (sessions.hours(date) ?? REGULAR_HOURS).pre };
    this.openDay(date);
    this.advance(start);
  }

  /** The KRX calendar the market trades on. */
  get calendar(): KrxCalendar {
    return this.sessions.calendar;
  }

  /** History spec of an issue. */
  specOf(issue: Issue): SeriesSpec {
    return {
      key: issue.key,
      ref: issue.ref,
      sigma: issue.sigma,
      round: (p) => roundToGrid(issue.grid, p),
      dailyVol: issue.listShrs * issue.turnover,
      calendar: this.calendar,
    };
  }

  /** Live-traded daily bars of an issue, for history lookups. */
  issueOverrides(issue: Issue): Overrides {
    return (date) => this.issueDays.get(date)?.[issue.idx];
  }

  /** Live-traded daily bars of an index. */
  indexOverrides(code: string): Overrides {
    return (date) => this.indexDays.get(date)?.get(code);
  }

  /** The phase at the market time. */
  phase(): Phase {
    if (this.time.date !== this.sessionDate) return 'closed';
    return phaseOf(this.hours, this.time.secs);
  }

  /** True for the issues that never trade today. */
  isHalted(issue: Issue): boolean {
    return this.params[issue.idx]!.halted;
  }

  private openDay(date: string): void {
    this.sessionDate = date;
    this.hours = this.sessions.hours(date) ?? REGULAR_HOURS;
    this.steps.length = 0;
    this.closed = false;
    this.cursor = this.hours.pre;
    this.lastCont = this.hours.open;
    this.lastAtClose = this.hours.afterClose;
    const day = dayNumber(date);
    const prev = this.calendar.prevTradingDay(date);
    const known = KNOWN_ISSUES.length;
    this.params = this.universe.issues.map((issue) => {
      const spec = this.specOf(issue);
      const u = unit(issue.key, day, 0x91);
      const runner = issue.idx < known || issue.market === 'konex' ? 0 : u < 0.003 ? 1 : u < 0.0045 ? -1 : 0;
      return dayParams({
        grid: issue.grid,
        base: closeOn(spec, prev, this.issueOverrides(issue)),
        sigma: issue.sigma,
        rate: issue.rate,
        dailyVol: spec.dailyVol,
        halted: issue.idx >= known && issue.market !== 'konex' && unit(issue.key, day, 0x92) < 0.0025,
        runner,
        key: (issue.key ^ Math.imul(day, 0x9e3779b1)) | 0,
      });
    });
    this.live = this.params.map((p) => initialLive(p, this.hours.open));
    this.params.forEach((p, i) => {
      this.quotes.base[i] = p.base;
      this.quotes.last[i] = p.base;
      this.quotes.vol[i] = 0;
      this.quotes.val[i] = 0;
    });
    this.indexLive = new Map(this.indexDefs.map((d) => [d.code, initialIndexLive(d, closeOn(d.spec, prev, this.indexOverrides(d.code)), this.quotes)]));
    const k200 = this.indexLive.get('K51')!.prevClose;
    this.contracts = listContracts(date, k200, this.calendar);
    this.contractLive = new Map(this.contracts.map((c) => [c.code, initialContractLive(gridPrice(c, theoretical(c, k200, yearsTo(c, prev))))]));
  }

  private closeDay(): void {
    const bars: DayBar[] = this.live.map((l, i) => {
      const p = this.params[i]!;
      const open = l.open || l.last;
      return { date: this.sessionDate, open, high: l.high || l.last, low: l.low || l.last, close: l.last, prevClose: p.base, vol: l.vol, val: l.val };
    });
    this.issueDays.set(this.sessionDate, bars);
    const idx = new Map<string, DayBar>();
    for (const [code, s] of this.indexLive) idx.set(code, indexBar(this.sessionDate, s));
    this.indexDays.set(this.sessionDate, idx);
    for (const d of [...this.issueDays.keys()].sort().slice(0, -KEEP_DAYS)) {
      this.issueDays.delete(d);
      this.indexDays.delete(d);
    }
  }

  /** Moves the market to KST time `to` (no-op if `to` is not later than the market time). */
  advance(to: KstTime): void {
    if (to.date < this.time.date || (to.date === this.time.date && to.secs <= this.time.secs)) return;
    const target = sessionDateFor(to, this.sessions);
    while (this.sessionDate < target) {
      this.runUntil(86_400);
      this.closeDay();
      const next = this.calendar.nextTradingDay(this.sessionDate);
      this.openDay(next <= target ? next : target);
    }
    this.runUntil(to.date === this.sessionDate ? to.secs : 86_400);
    this.time = to;
    this.generation++;
  }

  /** Marks a change without moving time (e.g. a manual tick outside the sessions). */
  touch(): void {
    this.generation++;
  }

  private runUntil(secs: number): void {
    if (secs <= this.cursor) return;
    for (const [t, kind] of schedule({ from: this.cursor, to: secs }, this.hours)) this.step(t, kind);
    this.cursor = secs;
  }

  private step(secs: number, kind: StepKind): void {
    let dt = 600;
    if (kind === 'cont') {
      dt = Math.max(0.001, secs - this.lastCont);
      this.lastCont = secs;
    } else if (kind === 'atclose') {
      dt = Math.max(0.001, secs - this.lastAtClose);
      this.lastAtClose = secs;
    }
    const step: Step = { k: this.steps.length, secs, dt, kind };
    this.steps.push(step);
    const { last, vol, val } = this.quotes;
    for (const issue of this.traded) {
      const l = this.live[issue.idx]!;
      applyStep(this.params[issue.idx]!, l, step);
      last[issue.idx] = l.last;
      vol[issue.idx] = l.vol;
      val[issue.idx] = l.val;
    }
    if (kind === 'close') this.closed = true;
    for (const d of this.indexDefs) updateIndex(d, this.indexLive.get(d.code)!, this.quotes, secs);
    if (kind === 'cont' || kind === 'close') {
      const k200 = this.indexLive.get('K51')!.value;
      for (const c of this.contracts) stepContract(c, this.contractLive.get(c.code)!, k200, this.sessionDate, step.k, secs, dt);
    }
  }

  /** Replays an issue's day and returns its bars of `cycle` seconds, oldest first. */
  issueBars(issue: Issue, cycle: number): readonly Bar[] {
    const p = this.params[issue.idx]!;
    const s = initialLive(p, this.hours.open);
    const series = new BarSeries(cycle);
    let vol = 0;
    let val = 0;
    const sink = (secs: number, price: number, qty: number) => {
      vol += qty;
      val += price * qty;
      series.add(secs, price, qty, price * qty, vol, val);
    };
    for (const step of this.steps) applyStep(p, s, step, sink);
    return series.bars();
  }

  /**
   * Which intraday bars `date` has: no date or the session date, the live
   * ones; a trading day before it (up to `lastCompleteDay`), bars
   * synthesised from its daily bar; a closed day or a later date, none.
   */
  barDay(date?: string): BarDay {
    if (date === undefined || date === this.sessionDate) return 'live';
    return date < this.sessionDate && date <= this.lastCompleteDay() && this.calendar.isTradingDay(date) ? 'past' : 'none';
  }

  /** An issue's bars of `cycle` seconds on a past trading day, from its daily bar as `history` serves it, oldest first. */
  issueBarsOn(issue: Issue, date: string, cycle: number): readonly Bar[] {
    return dayPathBars(this.issueDay(issue, date), this.hoursOn(date), cycle, { key: issue.key, grid: stockGrid(issue.grid) });
  }

  /** An index's bars of `cycle` seconds on a past trading day, from its daily bar as `history` serves it, oldest first. */
  indexBarsOn(def: IndexDef, date: string, cycle: number): readonly Bar[] {
    const day = dailyBar(def.spec, date, this.indexDaily(def.code));
    return dayPathBars(day, this.hoursOn(date), cycle, { key: def.spec.key, grid: INDEX_GRID, idle: true });
  }

  /** The session hours of a trading day. */
  hoursOn(date: string): DayHours {
    return this.sessions.hours(date) ?? REGULAR_HOURS;
  }

  /** A contract by code; the continuous code resolves to the front-month futures. */
  contract(code: string): Contract | undefined {
    if (code === CONTINUOUS_CODE) return this.contracts.find((c) => c.product === 'futures');
    return this.contracts.find((c) => c.code === code);
  }

  /** The daily bar of an issue for the session date so far (or final, once closed). */
  todayBar(issue: Issue): DayBar {
    const l = this.live[issue.idx]!;
    const p = this.params[issue.idx]!;
    return {
      date: this.sessionDate,
      open: l.open || l.last,
      high: l.high || l.last,
      low: l.low || l.last,
      close: l.last,
      prevClose: p.base,
      vol: l.vol,
      val: l.val,
    };
  }

  /** The last day with complete data: the session date once closed, else the trading day before. */
  lastCompleteDay(): string {
    return this.closed ? this.sessionDate : this.calendar.prevTradingDay(this.sessionDate);
  }

  /** Daily-bar lookup of an issue including today's bar once the session has closed. */
  issueDaily(issue: Issue): Overrides {
    const over = this.issueOverrides(issue);
    return (date) => (date === this.sessionDate && this.closed ? this.todayBar(issue) : over(date));
  }

  /** Daily-bar lookup of an index including today's bar once closed. */
  indexDaily(code: string): Overrides {
    const over = this.indexOverrides(code);
    return (date) => {
      if (date !== this.sessionDate || !this.closed) return over(date);
      return indexBar(date, this.indexLive.get(code)!);
    };
  }

  /** The pure-or-live daily bar of an issue on a date. */
  issueDay(issue: Issue, date: string): DayBar {
    return dailyBar(this.specOf(issue), date, this.issueDaily(issue));
  }
}

/** The KRX tick grid of an issue as a `PriceGrid`. */
function stockGrid(g: Grid): PriceGrid {
  return { round: (p) => roundToGrid(g, p), up: (p) => tickUp(g, p), down: (p) => tickDown(g, p) };
}

/** The day bar of an index as it stands now: volume in thousand shares and value in million KRW, as index payloads carry them. */
function indexBar(date: string, s: IndexLive): DayBar {
  return {
    date,
    open: s.open || s.value,
    high: s.high || s.value,
    low: s.low || s.value,
    close: s.value,
    prevClose: s.prevClose,
    vol: Math.round(s.vol / 1000),
    val: Math.round(s.val / 1e6),
  };
}
