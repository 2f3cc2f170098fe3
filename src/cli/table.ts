import type { Change, ConnectionState } from '../client/index.js';
import type { AnyRow } from '../client/rows.js';
import type { CliIo } from './io.js';

/**
 * The live table of `tail` on a terminal: one line per topic (last price,
 * change, volume, time, seq), then each feed's state and, while the bridge
 * is not connected, the connection's; redrawn in place at most ten times a
 * second, never taller than the terminal (a redraw moves the cursor up to
 * the table's first line, which must still be on the screen).
 */

/** The line that stands for the topics that do not fit. */
export function moreLine(n: number): string {
  return `… and ${n} more topic${n === 1 ? '' : 's'} (pipe the output for every change as JSON)`;
}

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
  /** The connection's line while it is not open. */
  private link: string | undefined;
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

  /**
   * The connection's state changed: while it is not open a line says so
   * (with `detail`, e.g. `closed 1006`) and no feed is shown as live; the
   * bridge sends each feed's state again once it is open.
   */
  connection(state: ConnectionState, detail: string): void {
    if (state === 'open') this.link = undefined;
    else {
      this.link = `connection: ${state}${detail ? ` (${detail})` : ''}`;
      for (const feed of this.states.keys()) this.states.set(feed, 'not connected');
    }
    this.schedule();
  }

  /** Draws what is pending now and stops redrawing (the command is ending). */
  close(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.draw();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.draw();
    }, 100);
  }

  private draw(): void {
    const width = Math.max(...[...this.rows.keys()].map((t) => t.length), 5);
    const status = [...[...this.states].map(([feed, state]) => `${feed}: ${state}`), ...(this.link === undefined ? [] : [this.link])];
    // The cursor ends on the line below the table, so the table takes one line less than the screen.
    const most = Math.max(1, this.io.rows - 1);
    const room = most - 1 - status.length;
    const topics = [...this.rows].sort(([a], [b]) => a.localeCompare(b));
    const shown = topics.length > room ? topics.slice(0, Math.max(0, room - 1)) : topics;
    const lines = [`${'topic'.padEnd(width)}  ${FIELDS.map(([h]) => h.padStart(12)).join('  ')}  ${'seq'.padStart(7)}`];
    for (const [topic, { row, seq }] of shown) {
      lines.push(`${topic.padEnd(width)}  ${FIELDS.map(([, names]) => pick(row, names).padStart(12)).join('  ')}  ${String(seq).padStart(7)}`);
    }
    if (shown.length < topics.length) lines.push(moreLine(topics.length - shown.length));
    lines.push(...status);
    lines.splice(most);
    const text = lines.map((l) => l.slice(0, this.io.columns)).join('\n');
    // Up to the first line drawn last time, clear below, draw again.
    this.io.out(`${this.drawn > 0 ? `\x1b[${this.drawn}F` : ''}\x1b[J${text}\n`);
    this.drawn = lines.length;
  }
}
