import type { ServerResponse } from 'node:http';
import { CHANNELS, MARKETS } from '../protocol/constants.js';
import { STOCK_CODE } from '../protocol/topics.js';
import { isIndexCodeOf } from '../lookups/resources.js';
import { kstSecondOfDay } from '../market/calendar.js';
import { recordedDay, type LiveSource } from '../recorder/catalog.js';
import { END_OF_DAY, END_OF_WINDOW, TIME_OF_DAY, hhmmss, isDay, kstMs } from '../recorder/format.js';
import { days, readDay, type Damage } from '../recorder/reader.js';
import { ReplayState } from '../replay/state.js';
import { queryParams } from '../access/params.js';
import { BASE_HEADERS } from './headers.js';
import { sendError, sendJson } from './respond.js';

/**
 * Browsing and exporting recordings over HTTP: `GET /recordings` lists the
 * recorded days with their time ranges, sizes and gaps (where no bridge
 * recorded), and each day's feeds with theirs (from the segments' summaries, never from file times); `GET
 * /recordings/{date}/{channel}.{market}?codes=&from=&to=&format=ndjson|csv`
 * streams the feed's changes (NDJSON: the frames as live clients got them;
 * CSV: the row after each change), reading the day line by line, never
 * whole. See docs/REPLAY.md.
 */

/** Where `/recordings` reads: the recordings directory, the open segment's live summary, and where damage found while reading is reported. */
export interface RecordingsSource {
  readonly dir: string;
  readonly live?: LiveSource;
  readonly onDamage?: (d: Damage) => void;
  /** An export whose client has taken nothing for this long (ms) is closed; default 30 s, a live connection's `maxBehindMs`. */
  readonly stallMs?: number;
}

/** `HHMMSS` KST of the second of `ms`; with `after`, of the second after it (an exclusive end: `240000` after the day's last second). */
function kstTime(ms: number, after = false): string {
  return hhmmss(kstSecondOfDay(ms) + (after ? 1 : 0));
}

/** The listing of `/recordings`: each day's and each feed's time range (`to` exclusive, KST) and size. */
export async function listRecordings(src: RecordingsSource, query: URLSearchParams, res: ServerResponse): Promise<void> {
  // The listing takes no parameter: a misspelt export query sent here is refused, as on every route.
  const params = queryParams(query, []);
  if (!params.ok) return sendError(res, 400, 'invalid_params', params.message);
  const out = [];
  for (const date of await days(src.dir)) {
    const day = await recordedDay(src.dir, date, src.live);
    if (day === undefined || day.summary === undefined) continue;
    const s = day.summary;
    out.push({
      date,
      from: kstTime(s.from),
      to: kstTime(s.to, true),
      segments: day.segments.length,
      bytes: day.diskBytes,
      compressed: day.compressed,
      feeds: Object.entries(s.feeds).map(([feed, f]) => ({ feed, from: kstTime(f.from), to: kstTime(f.to, true), changes: f.changes, bytes: f.bytes })),
      // Where no bridge recorded: from the second after the last one recorded to the second recording began again.
      gaps: (s.gaps ?? []).map((g) => ({ from: kstTime(g.from!, true), to: kstTime(g.to) })).filter((g) => g.from < g.to),
    });
  }
  sendJson(res, 200, { days: out });
}

/** The parameters an export takes. */
const EXPORT_PARAMS = ['codes', 'from', 'to', 'format'] as const;

/** Streams one feed of a recorded day. */
export async function exportFeed(src: RecordingsSource, path: string, query: URLSearchParams, res: ServerResponse): Promise<void> {
  const root = src.dir;
  const m = /^\/recordings\/(\d{8})\/([a-z]+)\.([a-z]+)$/.exec(path);
  if (!m) return sendError(res, 404, 'not_found', 'use /recordings/{YYYYMMDD}/{channel}.{market}');
  const [, date, channel, market] = m as unknown as [string, string, string, string];
  if (!isDay(date)) return sendError(res, 400, 'invalid_params', 'the date must be a day of the calendar (YYYYMMDD, KST)');
  if (!(CHANNELS as readonly string[]).includes(channel) || !(MARKETS as readonly string[]).includes(market)) {
    return sendError(res, 400, 'invalid_params', `channel one of ${CHANNELS.join(', ')}; market one of ${MARKETS.join(', ')}`);
  }
  const params = queryParams(query, EXPORT_PARAMS);
  if (!params.ok) return sendError(res, 400, 'invalid_params', params.message);
  const q = params.params;
  const from = q.from ?? '000000';
  const to = q.to ?? END_OF_DAY;
  const format = q.format ?? 'ndjson';
  if (!TIME_OF_DAY.test(from) || !END_OF_WINDOW.test(to) || from >= to)
    return sendError(res, 400, 'invalid_params', 'from and to are HHMMSS (KST), to up to 240000 (the end of the day), from before to');
  if (format !== 'ndjson' && format !== 'csv') return sendError(res, 400, 'invalid_params', 'format is ndjson or csv');
  const codes = new Set((q.codes ?? '').split(',').filter(Boolean));
  // A code that cannot be one is refused, not answered with an export that holds nothing: the forms `/ws` takes.
  const bad = [...codes].find((c) => (channel === 'index' ? !isIndexCodeOf(market, c) : !STOCK_CODE.test(c)));
  if (bad !== undefined)
    return sendError(
      res,
      400,
      'invalid_params',
      `codes: ${JSON.stringify(bad.slice(0, 32))} is not ${channel === 'index' ? `an index code of ${market}` : 'a stock code (6 characters, 0-9 and A-Z)'}`,
    );
  const feed = `${channel}.${market}.`;
  const fromMs = kstMs(date, from);
  const toMs = kstMs(date, to);
  const held = (await recordedDay(root, date, src.live))?.summary?.feeds[`${channel}.${market}`];
  if (held === undefined) return sendError(res, 404, 'not_recorded', `no recording of ${channel}.${market} on ${date}`);
  if (fromMs > held.to || toMs <= held.from)
    return sendError(res, 404, 'not_recorded', `${channel}.${market} on ${date} is recorded from ${kstTime(held.from)} to ${kstTime(held.to, true)} (KST)`);
  res.writeHead(200, {
    'Content-Type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    'Content-Disposition': `attachment; filename="${date}-${channel}.${market}.${format}"`,
    'Cache-Control': 'no-store',
    ...BASE_HEADERS,
  });
  const wanted = (topic: string) => topic.startsWith(feed) && (codes.size === 0 || codes.has(topic.slice(feed.length)));
  // A client that stops reading holds the day's reader and the feed's rows: past `stallMs` without taking anything, it is closed.
  const stallMs = src.stallMs ?? 30_000;
  const write = async (text: string) => {
    if (res.write(text)) return;
    const drained = await new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        res.off('drain', onDrain).off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => done(false), stallMs);
      res.on('drain', onDrain).on('close', onClose);
    });
    if (!drained) res.destroy();
  };
  // The feed's topics as the recording had them, as a replay holds them: what NDJSON opens with, and each CSV line's row.
  const state = new ReplayState();
  state.wildcards.add(`${channel}.${market}`);
  let opened = false;
  // NDJSON: the topics as they stood at `from` come first (as a replay's subscribe gets them), so a window is rebuilt from its lines alone.
  const open = async () => {
    opened = true;
    if (format === 'ndjson') for (const f of state.snapshots(undefined)) await write(`${f}\n`);
  };
  let columns: string[] | undefined;
  for await (const line of readDay(root, date, from, src.onDamage)) {
    if (res.destroyed) return;
    if (line.k === 'K' && line.start === true) state.restart();
    if (line.k === 'r' && wanted(line.topic)) state.keyframe(line, false);
    if (line.k !== 'c' || !wanted(line.topic)) continue;
    if (line.t >= toMs) break;
    if (line.t < fromMs) {
      state.apply(line.topic, line.seq, line.f);
      continue;
    }
    if (!opened) await open();
    if (format === 'ndjson') {
      await write(`${line.f}\n`);
      continue;
    }
    // The row after the change: applied now, or held already (a keyframe holds the changes of its moment); none past a gap.
    const applied = state.apply(line.topic, line.seq, line.f);
    const held = state.held(line.topic);
    if (held === undefined || (!applied && held.seq < line.seq)) continue;
    // The columns are the first row's fields, the header written with the first line.
    const head = columns === undefined;
    columns ??= Object.keys(held.row);
    await write(`${head ? csvHeader(columns) : ''}${[held.ts, line.topic, line.seq, ...columns.map((c) => held.row[c])].map(csvCell).join(',')}\n`);
  }
  if (!opened) await open();
  // No change in the window: the header alone (with the fields of a row held, when the recording has one), so a CSV is never empty.
  if (format === 'csv' && columns === undefined) await write(csvHeader(Object.keys(state.anyRow() ?? {})));
  res.end();
}

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csvHeader(columns: readonly string[]): string {
  return `${['ts', 'topic', 'seq', ...columns].map(csvCell).join(',')}\n`;
}
