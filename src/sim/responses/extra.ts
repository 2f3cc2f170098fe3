import { NATION_HOLIDAYS, addDays, isHoliday } from '../calendar.js';
import type { Market } from '../market/market.js';
import type { Issue } from '../market/universe.js';
import { gauss, hashString, unit } from '../random.js';
import { dateNum, issueOf, ok, r2, Refused, type Builder, type Ctx } from './context.js';
import { periodBars } from '../market/history.js';
import { historyRange } from './stocks.js';

/**
 * ETF data (net asset value, constituents) and the holiday service.
 */

function etfOf(ctx: Ctx): Issue {
  const issue = issueOf(ctx);
  if (issue.group !== 'EF') throw new Refused('invalidCode');
  return issue;
}

function premium(issue: Issue, date: string): number {
  return 1 + 0.0015 * gauss(issue.key, hashString(date), 0xa1);
}

/** The NAV of an ETF now: index-tracking ETFs follow their index, others their price. */
export function navOf(m: Market, issue: Issue): { nav: number; prev: number } {
  const p = m.params[issue.idx]!;
  const l = m.live[issue.idx]!;
  const prev = r2(p.base * premium(issue, m.sessionDate));
  const idx = issue.tracks ? m.indexLive.get(issue.tracks) : undefined;
  const nav = idx ? r2(prev * (idx.value / idx.prevClose)) : r2(l.last * premium(issue, `${m.sessionDate}${m.generation}`));
  return { nav, prev };
}

const nav: Builder = (ctx) => {
  const issue = etfOf(ctx);
  const n = navOf(ctx.market, issue);
  return ok({ isuSrtCd: issue.code, nav: n.nav, cmpprevddNav: r2(n.nav - n.prev) });
};

const navHistory: Builder = (ctx) => {
  const issue = etfOf(ctx);
  const m = ctx.market;
  const r = historyRange(ctx, issue.listDd);
  const bars = periodBars(m.specOf(issue), r.period, r.from, r.to, r.limit, m.issueDaily(issue));
  return ok({
    isuSrtCd: issue.code,
    hisLists: bars.map((b) => {
      const navNow = r2(b.close * premium(issue, b.date));
      return { trdDd: dateNum(b.date), trdPrc: b.close, nav: navNow, cmpprevddNav: r2(navNow - b.prevClose * premium(issue, `${b.date}p`)) };
    }),
  });
};

function constituents(m: Market, issue: Issue): Issue[] {
  const tracked = issue.tracks ? m.indexByCode.get(issue.tracks) : undefined;
  if (tracked) return tracked.members.slice(0, 200).map((i) => m.universe.issues[i]!);
  const pool = m.indexByCode.get('S300')!.members;
  const n = 10 + Math.floor(unit(issue.key, 0xa2) * 21);
  return [...pool]
    .sort((a, b) => unit(issue.key, a) - unit(issue.key, b))
    .slice(0, n)
    .map((i) => m.universe.issues[i]!);
}

const pdf: Builder = (ctx) => {
  const issue = etfOf(ctx);
  const m = ctx.market;
  const members = constituents(m, issue);
  const weight = (i: Issue) => i.listShrs * m.params[i.idx]!.base;
  const total = members.reduce((a, i) => a + weight(i), 0);
  const unitValue = m.params[issue.idx]!.base * 100_000;
  const rows = members
    .map((i) => {
      const px = m.params[i.idx]!.base;
      const units = Math.max(1, Math.round((unitValue * weight(i)) / total / px));
      return { isuCd: i.isin, Unit: units, isuNm: i.korAbbrv, SetAmt: units * px, ratio: 0 };
    })
    .sort((a, b) => (a.isuCd < b.isuCd ? -1 : 1));
  const sum = rows.reduce((a, r) => a + r.SetAmt, 0);
  for (const r of rows) r.ratio = r2((r.SetAmt / sum) * 100);
  return ok({ Cnt: String(rows.length), InqDd: m.sessionDate, Lists: rows });
};

const holiday: Builder = (ctx) => {
  const nation = String(ctx.params.nationcode);
  const today = ctx.market.time.date;
  const days = NATION_HOLIDAYS[nation] ?? [];
  const out: string[] = [];
  for (let d = addDays(today, 1); d <= addDays(today, 366); d = addDays(d, 1)) {
    if (nation === 'KR' ? isHoliday(ctx.market.calendar, d, 'KR') : days.includes(d.slice(4))) out.push(d);
  }
  return ok({ marketCd: nation, lists: out });
};

/** Builders of the ETF operations, by the path's last segment. */
export const ETF_BUILDERS: Readonly<Record<string, Builder>> = { closenav: nav, nav, navhistory: navHistory, pdf };

/** Builder of the holiday service. */
export const HOLIDAY: Builder = holiday;
