import type { Change } from '../client/index.js';
import type { AnyRow } from '../client/rows.js';
import type { CliIo } from './io.js';

/**
 * The live table of `tail` on a terminal: one line per topic (last price,
 * change, volume, time, seq), redrawn in place at most ten times a second.
 */

const FIELDS = [
  ['price', ['trdPrc', 'inddClsprc', 'askStep1BstordPrc']],
  ['change', ['cmpprevddPrc']],
  ['volume', ['accTrdvol']],
  ['time', ['trdTm']],
] as const;

function pick(row: AnyRow, names: readonly string[]): string {
  for (const n of names) {
    const v = (row as unknown as Record<string, unknown>)[n];
    if (v !== undefined && v !== null) return typeof v === 'number' ? v.toLocaleString('en-US') : String(v);
  }
  return '–';
}

/** The table. */
export class Table {
  private readonly rows = new Map<string, { row: AnyRow; seq: number }>();
  private readonly states = new Map<string, string>();
  private drawn = 0;
  private timer: NodeJS.Timeout | undefined;

  /** A table writing to `io`. */
  constructor(private readonly io: CliIo) {}

  /** A topic changed. */
  update(topic: string, row: AnyRow, change: Change): void {
    this.rows.set(topic, { row, seq: change.seq });
    this.schedule();
  }

  /** A feed's state changed. */
  status(feed: string, state: string, reason: string | undefined): void {
    this.states.set(feed, reason ? `${state} (${reason})` : state);
    this.schedule();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.draw();
    }, 100);
  }

  private draw(): void {
    const width = Math.max(...[...this.rows.keys()].map((t) => t.length), 5);
    const lines = [`${'topic'.padEnd(width)}  ${FIELDS.map(([h]) => h.padStart(12)).join('  ')}  ${'seq'.padStart(7)}`];
    for (const [topic, { row, seq }] of [...this.rows].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`${topic.padEnd(width)}  ${FIELDS.map(([, names]) => pick(row, names).padStart(12)).join('  ')}  ${String(seq).padStart(7)}`);
    }
    for (const [feed, state] of this.states) lines.push(`${feed}: ${state}`);
    const text = lines.map((l) => l.slice(0, this.io.columns)).join('\n');
    // Up to the first line drawn last time, clear below, draw again.
    this.io.out(`${this.drawn > 0 ? `\x1b[${this.drawn}F` : ''}\x1b[J${text}\n`);
    this.drawn = lines.length;
  }
}
