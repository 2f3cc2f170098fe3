import { el, setText } from './dom.js';
import { clock, isoDate } from './format.js';

/**
 * The demo page's replay control: a form that lists the recorded days
 * (`GET /recordings`) and asks for a window and a speed, and the bar shown
 * while a replay plays (its clock, its end, and the way back to live).
 * The page itself switches the SDK client (`{ replay }` or live); this
 * class only asks and shows. See docs/DEMO.md and docs/REPLAY.md.
 */

/** A recorded day as `GET /recordings` lists it (the fields the control reads). */
export interface RecordedDay {
  /** `YYYYMMDD` (KST). */
  readonly date: string;
  /** First and last (exclusive) recorded second, `HHMMSS` KST. */
  readonly from: string;
  readonly to: string;
  readonly feeds: readonly { readonly feed: string }[];
}

/** What to replay, as the SDK's `replay` option takes it. */
export interface ReplayChoice {
  readonly date: string;
  readonly from: string;
  readonly to: string;
  readonly speed: number | 'max';
}

/** `HHMMSS` of a time input's value (`HH:MM` or `HH:MM:SS`); undefined when it is not one. */
export function timeOfInput(value: string): string | undefined {
  const m = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/.exec(value);
  return m ? `${m[1]}${m[2]}${m[3] ?? '00'}` : undefined;
}

/**
 * `HHMMSS` of the end input's value, an exclusive end: `23:59:59` is the
 * end of the day (`240000`, its last second included), which a time input
 * cannot show.
 */
export function endOfInput(value: string): string | undefined {
  const t = timeOfInput(value);
  return t === '235959' ? '240000' : t;
}

/** The end input's value of an exclusive end `HHMMSS` (`240000`, the end of the day, shows as `23:59:59`). */
export function endInputOf(hhmmss: string): string {
  return inputOfTime(hhmmss === '240000' ? '235959' : hhmmss);
}

/** A time input's value (`HH:MM:SS`) of `HHMMSS`. */
export function inputOfTime(hhmmss: string): string {
  return `${hhmmss.slice(0, 2)}:${hhmmss.slice(2, 4)}:${hhmmss.slice(4, 6)}`;
}

/** The label of a recorded day in the day list: `2026-11-24 · 09:00:00–15:30:01 · 3 feeds`. */
export function dayLabel(d: RecordedDay): string {
  return `${isoDate(d.date)} · ${inputOfTime(d.from)}–${inputOfTime(d.to)} · ${d.feeds.length} feed${d.feeds.length === 1 ? '' : 's'}`;
}

/** Why a window cannot be replayed (undefined when it can): it must lie, at least in part, inside the day's recording. */
export function choiceProblem(day: RecordedDay | undefined, from: string | undefined, to: string | undefined): string | undefined {
  if (day === undefined) return 'pick a recorded day';
  if (from === undefined || to === undefined) return 'times are HH:MM:SS';
  if (from >= to) return 'the start must be before the end';
  if (from >= day.to || to <= day.from) return `the recording of ${isoDate(day.date)} runs from ${inputOfTime(day.from)} to ${inputOfTime(day.to)}`;
  return undefined;
}

/** Epoch ms of `HHMMSS` KST on `YYYYMMDD`. */
export function kstEpoch(date8: string, hhmmss: string): number {
  const secs = Number(hhmmss.slice(0, 2)) * 3600 + Number(hhmmss.slice(2, 4)) * 60 + Number(hhmmss.slice(4, 6));
  return Date.UTC(Number(date8.slice(0, 4)), Number(date8.slice(4, 6)) - 1, Number(date8.slice(6, 8))) - 9 * 3600_000 + secs * 1000;
}

/** The elements of the control. */
export interface ReplayElements {
  /** The header button that opens the form. */
  readonly open: HTMLButtonElement;
  readonly form: HTMLFormElement;
  readonly day: HTMLSelectElement;
  readonly from: HTMLInputElement;
  readonly to: HTMLInputElement;
  readonly speed: HTMLSelectElement;
  readonly cancel: HTMLButtonElement;
  /** Where the form says what is wrong. */
  readonly message: HTMLElement;
  /** The bar shown while replaying. */
  readonly bar: HTMLElement;
  readonly live: HTMLButtonElement;
}

/** What the control asks of the page. */
export interface ReplayHandlers {
  /** Fetches the recorded days (`GET /recordings`). */
  readonly days: () => Promise<readonly RecordedDay[]>;
  /** Plays a replay. */
  readonly play: (c: ReplayChoice) => void;
  /** Goes back to the live market. */
  readonly live: () => void;
}

/** The replay control. */
export class ReplayControl {
  private known: readonly RecordedDay[] = [];
  private readonly text: HTMLElement;
  private readonly clockText: HTMLElement;

  /** Wires the form and the bar. */
  constructor(
    private readonly els: ReplayElements,
    private readonly on: ReplayHandlers,
  ) {
    this.text = el('span', { class: 'replay-text' });
    this.clockText = el('span', { class: 'replay-clock num' });
    els.bar.prepend(el('span', { class: 'replay-tag' }, 'Replay'), this.text, this.clockText);
    els.open.addEventListener('click', () => (els.form.hidden ? void this.openForm() : this.closeForm()));
    els.cancel.addEventListener('click', () => this.closeForm());
    els.day.addEventListener('change', () => this.fillTimes());
    els.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.submit();
    });
    els.live.addEventListener('click', () => on.live());
  }

  /** Shows the bar of a replay that starts. */
  playing(c: ReplayChoice): void {
    const b = this.els.bar;
    b.hidden = false;
    b.dataset.state = 'playing';
    setText(this.text, `${isoDate(c.date)} ${inputOfTime(c.from)}–${inputOfTime(c.to)} KST · ${c.speed === 'max' ? 'as fast as it reads' : `×${c.speed}`}`);
    setText(this.clockText, inputOfTime(c.from));
    this.els.open.setAttribute('aria-pressed', 'true');
  }

  /** Shows the replay clock (a replayed change's `ts`). */
  clock(ts: number): void {
    setText(this.clockText, clock(Math.floor((((ts / 1000 + 9 * 3600) % 86_400) + 86_400) % 86_400), true));
  }

  /** Shows that the replay played to its end. */
  ended(): void {
    // Each feed of the replay says so; once is enough.
    if (this.els.bar.dataset.state !== 'playing') return;
    this.els.bar.dataset.state = 'ended';
    setText(this.clockText, `${this.clockText.textContent ?? ''} · ended`);
  }

  /** Back to live: the bar goes. */
  live(): void {
    this.els.bar.hidden = true;
    delete this.els.bar.dataset.state;
    this.els.open.setAttribute('aria-pressed', 'false');
  }

  private async openForm(): Promise<void> {
    const { form, day, message } = this.els;
    form.hidden = false;
    setText(message, 'loading the recorded days…');
    try {
      this.known = [...(await this.on.days())].reverse();
    } catch (e) {
      setText(message, `recordings not available: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    day.replaceChildren(...this.known.map((d) => el('option', { value: d.date }, dayLabel(d))));
    setText(message, this.known.length === 0 ? 'nothing recorded yet' : '');
    this.fillTimes();
    day.focus();
  }

  private closeForm(): void {
    this.els.form.hidden = true;
  }

  /** The chosen day's whole recording, as the default window. */
  private fillTimes(): void {
    const d = this.known.find((x) => x.date === this.els.day.value);
    if (d === undefined) return;
    this.els.from.value = inputOfTime(d.from);
    this.els.to.value = endInputOf(d.to);
  }

  private submit(): void {
    const { day, from, to, speed, message } = this.els;
    const d = this.known.find((x) => x.date === day.value);
    const f = timeOfInput(from.value);
    const t = endOfInput(to.value);
    const problem = choiceProblem(d, f, t);
    if (problem !== undefined) return setText(message, problem);
    setText(message, '');
    this.closeForm();
    this.on.play({ date: d!.date, from: f!, to: t!, speed: speed.value === 'max' ? 'max' : Number(speed.value) });
  }
}
