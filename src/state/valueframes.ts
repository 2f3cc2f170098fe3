import type { Channel, Market } from '../protocol/constants.js';
import { topicOf } from '../protocol/topics.js';
import type { ListDelta } from '../upstream/listread.js';
import type { Region, Shape } from '../upstream/kernel/kernel.js';
import { patchHead, patchTsPart } from './frames.js';
import type { RowLayout } from './layout.js';

/**
 * Patch frames of rows that a `ListReader` found changed in a few values,
 * written as bytes by the reader's kernel, one after another, from the
 * changed values' bytes in the body: the topic, the seq, the time, a
 * `replace` operation per changed value and the checksum. The frames of
 * one `apply` call are copied out of the kernel's memory into buffers of
 * their own (up to 64 KiB each) when the call is done. The bytes are the
 * frame every consumer takes (the sockets, the journal, the recorder); no
 * text is made of them unless asked for. Byte for byte the UTF-8 of the
 * frame `apply` serialises for the same change.
 */

const SEQ_PART = '","seq":';

/** The most bytes of frames held in the kernel before they are copied out. */
const CHUNK = 64 << 10;

/** The longest code written by the kernel. */
const MAX_CODE = 64;

const EMPTY = Buffer.alloc(0);

/** The buffer a batch's frames are in: set when the frames written into the kernel are copied out. */
export interface FrameChunk {
  buf: Buffer;
}

/** Whether a code is written in a topic's JSON as it is, in ASCII (no quote, backslash, control or non-ASCII character). */
function plainAscii(s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** Whether `s` is ASCII. */
function ascii(s: string): boolean {
  for (let k = 0; k < s.length; k++) if (s.charCodeAt(k) > 0x7f) return false;
  return true;
}

/** Writes `s` (ASCII) at `at` of `u8`. */
function putAscii(u8: Uint8Array, at: number, s: string): void {
  for (let k = 0; k < s.length; k++) u8[at + k] = s.charCodeAt(k);
}

/** Writes the patch frames of one `apply` call (one feed, one `ts`, one delta). */
export class ValueFrames {
  /** `,"ts":…,"ops":[`. */
  readonly tsPart: string;
  /** `{"type":"patch","topic":"channel.market.`, in the kernel; undefined when not ASCII. */
  private readonly topic: Region | undefined;
  private readonly ts: Region;
  private readonly out: Region;
  private used = 0;
  private holder: FrameChunk = { buf: EMPTY };
  private start = 0;

  /** A writer for `channel.market` frames stamped `ts`, of rows of `d`. */
  constructor(
    channel: Channel,
    market: Market,
    ts: number,
    private readonly d: ListDelta,
  ) {
    this.tsPart = patchTsPart(ts);
    const k = d.kernel;
    const topic = patchHead(topicOf(channel, market, '')).slice(0, -SEQ_PART.length);
    if (ascii(topic)) {
      this.topic = { ...k.scratch('topic', topic.length), bytes: topic.length };
      putAscii(k.u8, this.topic.at, topic);
    }
    this.ts = { ...k.scratch('ts', this.tsPart.length), bytes: this.tsPart.length };
    putAscii(k.u8, this.ts.at, this.tsPart);
    this.out = k.scratch('frames', CHUNK);
  }

  /** The buffer the last frame written is in (set when the call's frames are copied out, `finish`). */
  get chunk(): FrameChunk {
    return this.holder;
  }

  /** Where the last frame written ends in `chunk`. */
  get end(): number {
    return this.used;
  }

  /**
   * Writes the patch frame of row `i` of the delta (topic `code`, `seq`,
   * checksum `crc`, the row having `layout`) and returns where it starts
   * in `chunk` (it ends at `end`); -1 when a part is not ASCII or a changed
   * value's bytes are not its JSON (the caller then serialises the values).
   */
  write(code: string, seq: number, crc: number, layout: RowLayout, i: number): number {
    const d = this.d;
    const topic = this.topic;
    if (topic === undefined || code.length > MAX_CODE || seq >= 4_294_967_296 || !plainAscii(code)) return -1;
    const shape: Shape | undefined = d.shape(layout);
    if (shape === undefined) return -1;
    // What the frame can take: its fixed parts, each changed value's operation, the row's bytes for the values, and the kernel's wide writes.
    const bound = topic.bytes + code.length + SEQ_PART.length + 10 + this.ts.bytes + d.changedCount(i) * (2 + shape.maxReplace) + d.rowLength(i) + 48;
    if (bound > CHUNK) return -1;
    if (this.used + bound > CHUNK) this.flush();
    const k = d.kernel;
    const codeAt = k.scratch('code', MAX_CODE);
    putAscii(k.u8, codeAt.at, code);
    const len = d.writePatch(i, this.out.at + this.used, topic, codeAt, code.length, seq, this.ts, shape, crc);
    if (len === 0) return -1;
    this.start = this.used;
    this.used += len;
    return this.start;
  }

  /** Copies the frames written into the kernel since the last copy into a buffer of their own, the chunk they are read from. */
  finish(): void {
    this.flush();
  }

  private flush(): void {
    if (this.used === 0) return;
    // Unpooled: a frame's buffer is its batch's alone.
    const buf = Buffer.allocUnsafeSlow(this.used);
    buf.set(this.d.kernel.u8.subarray(this.out.at, this.out.at + this.used));
    this.holder.buf = buf;
    this.holder = { buf: EMPTY };
    this.used = 0;
  }
}
