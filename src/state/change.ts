import type { PatchOp } from '../protocol/messages.js';
import type { Row } from '../upstream/normalise.js';
import type { FrameChunk } from './valueframes.js';

/**
 * The change events the store produces: what changed, and the frame every
 * recipient gets, serialised once and encoded to bytes at most once.
 */

/** One change of one topic: its serialised frame, built once for every recipient. */
export interface ChangeEvent {
  readonly topic: string;
  readonly code: string;
  readonly seq: number;
  readonly kind: 'snapshot' | 'patch';
  /** The serialised `snapshot` or `patch` message. */
  readonly frame: string;
  /** The row after the change. */
  readonly row: Row;
  /** The operations, for patches. */
  readonly ops?: readonly PatchOp[];
  /**
   * The frame's UTF-8 bytes, shared by every consumer (the gateway's
   * fan-out, a cluster bus). Events the store makes always have them,
   * encoded on first use; others may leave them out.
   */
  readonly bytes?: Buffer;
  /** CRC-32 of the canonical row after the change (events the store makes have it). */
  readonly crc?: number;
}

/** The UTF-8 bytes of an event's frame: the ones it holds, or encoded now for an event that holds none. */
export function frameBytes(e: ChangeEvent): Buffer {
  return e.bytes ?? Buffer.from(e.frame);
}

/**
 * A ChangeEvent made by the store. Its frame is made once, as text or as
 * bytes: a frame the store wrote as bytes (`Change.written`) is decoded to
 * text only when something asks for the text, and a frame made as text is
 * encoded only when something asks for the bytes; either is then kept. The
 * consumers of every change (the fan-out, the state journal, the recorder)
 * take the bytes. A patch's operations, when not given, are read back from
 * its frame on first use (nothing on the fan-out path needs them).
 */
export class Change implements ChangeEvent {
  private text: string | undefined;
  private encoded: Buffer | undefined;
  /** Where a frame written as bytes is: `[start, end)` of `chunk`'s buffer, shared by the frames of one batch. */
  private chunk: FrameChunk | undefined = undefined;
  private start = 0;
  private end = 0;

  /** An event of `kind` for `topic` at `seq`, whose frame is `frame`. */
  constructor(
    readonly topic: string,
    readonly code: string,
    readonly seq: number,
    readonly kind: 'snapshot' | 'patch',
    frame: string,
    readonly row: Row,
    readonly crc: number,
    private operations?: readonly PatchOp[],
  ) {
    this.text = frame;
    this.encoded = undefined;
  }

  /** A patch whose frame was written as the UTF-8 bytes `[start, end)` of `chunk`'s buffer (not to be written again). */
  static written(topic: string, code: string, seq: number, row: Row, crc: number, chunk: FrameChunk, start: number, end: number): Change {
    const c = new Change(topic, code, seq, 'patch', '', row, crc);
    c.text = undefined;
    c.chunk = chunk;
    c.start = start;
    c.end = end;
    return c;
  }

  /** The serialised message. */
  get frame(): string {
    return (this.text ??= this.chunk!.buf.toString('utf8', this.start, this.end));
  }

  /** The operations, for patches (undefined for snapshots). */
  get ops(): readonly PatchOp[] | undefined {
    if (this.operations === undefined && this.kind === 'patch') this.operations = (JSON.parse(this.frame) as { ops: PatchOp[] }).ops;
    return this.operations;
  }

  /** The frame's UTF-8 bytes (one Buffer for every recipient). */
  get bytes(): Buffer {
    return (this.encoded ??= this.chunk !== undefined ? this.chunk.buf.subarray(this.start, this.end) : Buffer.from(this.text!));
  }
}
