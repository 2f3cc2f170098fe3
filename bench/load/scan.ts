/**
 * A frame scanner for the load generator: reads `type`, `topic`, `seq` and
 * `ts` of each `patch` / `snapshot` message in a frame (one message or a
 * JSON array of them) without building the messages, so one core can
 * check 150,000 updates a second. Any other message is handed over by its
 * byte range for a real parse. It relies on the field order every peer
 * writes (`type` first, then `topic`, `seq`, `ts`); the pool cross-checks
 * it against `JSON.parse` on a sample of frames. Given a stamp key (the
 * text before a row field's value in a patch's operations, e.g.
 * `"path":"/answeredUs","value":`), a patch's time is that value in ms
 * (it is in µs) instead of its `ts`, NaN when the patch has none. Pure
 * functions.
 */

/** Where scanned messages go. */
export interface FrameSink {
  patch(slot: number, seq: number, ts: number): void;
  snapshot(slot: number, seq: number): void;
  /** A topic the index does not know, or a message missing a field. */
  unknown(): void;
  /** Any other message, as the range `[start, end)` of the frame (its bytes, for ASCII frames). */
  other(start: number, end: number): void;
}

const TYPE = '"type":"';
const TOPIC = '"topic":"';
const SEQ = '"seq":';
const TS = '"ts":';

/**
 * Topic to slot lookup. Topics of `prefix` + six digits (every benchmark
 * topic) resolve through an array indexed by the code, with no string
 * made; any other topic through a map.
 */
export class TopicSlots {
  private readonly byCode = new Int32Array(1_000_000).fill(-1);
  private readonly byTopic = new Map<string, number>();

  /** An index of `topics`, slot = position. */
  constructor(
    topics: readonly string[],
    private readonly prefix: string,
  ) {
    topics.forEach((t, i) => {
      this.byTopic.set(t, i);
      const code = t.slice(prefix.length);
      if (t.startsWith(prefix) && /^\d{6}$/.test(code)) this.byCode[Number(code)] = i;
    });
  }

  /** The slot of a topic string. */
  get(topic: string): number {
    return this.byTopic.get(topic) ?? -1;
  }

  /** The slot of the topic at `text[start, end)`, or -1. */
  at(text: string, start: number, end: number): number {
    if (end - start === this.prefix.length + 6 && text.startsWith(this.prefix, start)) {
      let code = 0;
      for (let i = end - 6; i < end; i++) {
        const d = text.charCodeAt(i) - 48;
        if (d < 0 || d > 9) return this.get(text.slice(start, end));
        code = code * 10 + d;
      }
      return this.byCode[code]!;
    }
    return this.get(text.slice(start, end));
  }
}

// The last number read; reused so a scan allocates nothing per message.
const num = { value: 0, end: 0 };

/** Reads the non-negative decimal number at `text[p]` into `num` (NaN when there is none). */
function readNumber(text: string, p: number): void {
  let v = 0;
  let c = text.charCodeAt(p);
  const start = p;
  while (c >= 48 && c <= 57) {
    v = v * 10 + (c - 48);
    c = text.charCodeAt(++p);
  }
  if (c === 46) {
    let scale = 1;
    let frac = 0;
    c = text.charCodeAt(++p);
    while (c >= 48 && c <= 57) {
      frac = frac * 10 + (c - 48);
      scale *= 10;
      c = text.charCodeAt(++p);
    }
    v += frac / scale;
  }
  num.value = p === start ? NaN : v;
  num.end = p;
}

/** The stamp after `from` and before `limit`, µs read as ms; NaN when there is none. */
function stampAt(text: string, from: number, limit: number, key: string): number {
  const k = text.indexOf(key, from);
  if (k < 0 || k >= limit) return NaN;
  readNumber(text, k + key.length);
  return num.value / 1000;
}

/**
 * Scans a frame into `sink`; returns the number of messages seen (0 when
 * the frame holds no message with a `type`, e.g. `{"ok":50}`). With
 * `stampKey`, a patch's time is its stamp (see above).
 */
export function scanUpdates(text: string, slots: TopicSlots, sink: FrameSink, stampKey?: string): number {
  let n = 0;
  let p = text.indexOf(TYPE);
  while (p >= 0) {
    p += TYPE.length;
    n++;
    // A message's fields lie before the next message's `type`.
    const next = text.indexOf(TYPE, p);
    const limit = next < 0 ? text.length : next;
    const patch = text.startsWith('patch"', p);
    if (!patch && !text.startsWith('snapshot"', p)) {
      // From this message's `{` to just before the separator of the next one (or the closing `]`).
      const start = text.lastIndexOf('{', p);
      const end = next >= 0 ? text.lastIndexOf(',', text.lastIndexOf('{', next)) : text.charCodeAt(0) === 91 ? text.lastIndexOf(']') : text.length;
      sink.other(start, end);
      p = next;
      continue;
    }
    const t = text.indexOf(TOPIC, p);
    const te = t < 0 || t >= limit ? -1 : text.indexOf('"', t + TOPIC.length);
    const s = te < 0 ? -1 : text.indexOf(SEQ, te);
    if (s < 0 || s >= limit) {
      sink.unknown();
      p = next;
      continue;
    }
    const slot = slots.at(text, t + TOPIC.length, te);
    readNumber(text, s + SEQ.length);
    const seq = num.value;
    const ts = patch ? text.indexOf(TS, num.end) : -1;
    if (slot < 0 || Number.isNaN(seq) || (patch && (ts < 0 || ts >= limit))) sink.unknown();
    else if (!patch) sink.snapshot(slot, seq);
    else {
      readNumber(text, ts + TS.length);
      if (Number.isNaN(num.value)) sink.unknown();
      else sink.patch(slot, seq, stampKey === undefined ? num.value : stampAt(text, num.end, limit, stampKey));
    }
    p = next;
  }
  return n;
}
