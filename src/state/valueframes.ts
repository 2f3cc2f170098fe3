import type { Channel, Market } from '../protocol/constants.js';
import { textChecksum } from '../protocol/crc32.js';
import { topicOf } from '../protocol/topics.js';
import type { ListDelta } from '../upstream/listread.js';
import { CHANGE, F, type Shape } from '../upstream/kernel/kernel.js';
import type { Row } from '../upstream/normalise.js';
import { patchHead, patchTsPart } from './frames.js';
import type { RowLayout } from './layout.js';

/**
 * Checksums and patch frames of rows that a `ListReader` found changed in
 * a few values, made by the reader's kernel from the values' bytes in the
 * body: the frames one after another, each the topic, the seq, the time, a
 * `replace` operation per changed value and the checksum. The frames of
 * one `apply` call are copied out of the kernel's memory into buffers of
 * their own (up to 64 KiB each) when the call is done. The bytes are the
 * frame every consumer takes (the sockets, the journal, the recorder); no
 * text is made of them unless asked for. Byte for byte the UTF-8 of the
 * frame `apply` serialises for the same change, and the checksum
 * `rowChecksum` gives.
 */

const SEQ_PART = '","seq":';

/** The most bytes of frames held in the kernel before they are copied out. */
const CHUNK = 64 << 10;

/** The longest code written by the kernel when the body's key field is not its JSON. */
const MAX_CODE = 64;

/** Room for a row's canonical bytes: longer rows are checksummed here. */
const SCRATCH = 4 << 10;

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

/** Makes the checksums and patch frames of one `apply` call (one feed, one `ts`, one delta). */
export class ValueFrames {
  /** `,"ts":…,"ops":[`. */
  readonly tsPart: string;
  /** Whether the kernel writes frames (the topic is ASCII). */
  private readonly writes: boolean;
  private readonly out: number;
  private holder: FrameChunk = { buf: EMPTY };
  private end_ = 0;
  /** The checksum of the last change made. */
  crc = 0;
  /** The layout of the last change, its shape in the kernel, and where its key field is. */
  private layout: RowLayout | undefined;
  private shape: Shape | undefined;

  /** A writer for `channel.market` frames stamped `ts`, of rows of `d` keyed by `keyField`. */
  constructor(
    channel: Channel,
    market: Market,
    ts: number,
    private readonly d: ListDelta,
    private readonly keyField: string,
  ) {
    this.tsPart = patchTsPart(ts);
    const k = d.kernel;
    const topic = patchHead(topicOf(channel, market, '')).slice(0, -SEQ_PART.length);
    const topicAt = k.scratch('topic', topic.length);
    const tsAt = k.scratch('ts', this.tsPart.length);
    this.out = k.scratch('frames', CHUNK).at;
    const code = k.scratch('code', MAX_CODE);
    const scratch = k.scratch('crc', SCRATCH);
    const u8 = k.u8;
    const i32 = k.i32;
    this.writes = ascii(topic);
    putAscii(u8, topicAt.at, topic);
    putAscii(u8, tsAt.at, this.tsPart);
    const c = k.ctl;
    i32[c + F.TOPIC] = topicAt.at;
    i32[c + F.TOPIC_LEN] = topic.length;
    i32[c + F.TS] = tsAt.at;
    i32[c + F.TS_LEN] = this.tsPart.length;
    i32[c + F.OUT] = this.out;
    i32[c + F.USED] = 0;
    i32[c + F.CAP] = CHUNK;
    i32[c + F.CODE] = code.at;
    i32[c + F.SCRATCH] = scratch.at;
    i32[c + F.SCRATCH_CAP] = SCRATCH;
    d.bind();
  }

  /** The buffer the last frame written is in (set when the call's frames are copied out, `finish`). */
  get chunk(): FrameChunk {
    return this.holder;
  }

  /** Where the last frame written ends in `chunk`. */
  get end(): number {
    return this.end_;
  }

  /**
   * Makes the change of row `i` of the delta (`row`, of `layout`; topic
   * `code`) to `seq`: its checksum (`crc`) and its patch frame, whose start
   * in `chunk` is returned (it ends at `end`); -1 when the frame has a part
   * that is not ASCII or a changed value whose bytes are not its JSON (the
   * caller then serialises the values).
   */
  write(code: string, seq: number, layout: RowLayout, i: number, row: Row): number {
    const d = this.d;
    const k = d.kernel;
    if (layout !== this.layout) {
      this.layout = layout;
      this.shape = k.shape(layout);
      k.i32[k.ctl + F.KEY] = layout.keys.indexOf(this.keyField);
    }
    const shape = this.shape;
    if (shape === undefined || seq >= 4_294_967_296 || !this.writes) {
      this.crc = textChecksum(row, layout, d.bytes, d.rowStart(i), d.fields, d.fieldAt(i));
      return -1;
    }
    let crc: number | undefined;
    let codeLen = -1;
    for (;;) {
      const r = d.change(i, shape.at, seq, crc, codeLen);
      if (r >= 0) {
        this.crc = k.i32[k.ctl + F.CRC]! >>> 0;
        this.end_ = k.i32[k.ctl + F.USED]!;
        return r;
      }
      if (r === CHANGE.NO_CRC) crc = textChecksum(row, layout, d.bytes, d.rowStart(i), d.fields, d.fieldAt(i));
      else if (r === CHANGE.NO_ROOM) {
        if (k.i32[k.ctl + F.USED] === 0) break;
        this.flush();
      } else if (r === CHANGE.NO_CODE && codeLen < 0 && code.length <= MAX_CODE && plainAscii(code)) {
        crc = k.i32[k.ctl + F.CRC]! >>> 0;
        codeLen = code.length;
        putAscii(k.u8, k.i32[k.ctl + F.CODE]!, code);
      } else break;
    }
    // A frame the kernel does not write: it has the checksum by now (made, or given by the caller).
    this.crc = k.i32[k.ctl + F.CRC]! >>> 0;
    return -1;
  }

  /** Copies the frames written into the kernel since the last copy into a buffer of their own, the chunk they are read from. */
  finish(): void {
    this.flush();
  }

  private flush(): void {
    const k = this.d.kernel;
    const used = k.i32[k.ctl + F.USED]!;
    if (used === 0) return;
    // Unpooled: a frame's buffer is its batch's alone.
    const buf = Buffer.allocUnsafeSlow(used);
    buf.set(k.u8.subarray(this.out, this.out + used));
    this.holder.buf = buf;
    this.holder = { buf: EMPTY };
    k.i32[k.ctl + F.USED] = 0;
  }
}
