import type { PatchOp } from '../protocol/messages.js';
import type { Row } from '../upstream/normalise.js';

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

/**
 * A ChangeEvent made by the store: the frame's bytes are encoded on first
 * use and kept; a patch's operations, when not given, are read back from
 * its frame on first use (nothing on the fan-out path needs them).
 */
export class Change implements ChangeEvent {
  private encoded: Buffer | undefined;

  /** An event of `kind` for `topic` at `seq`. */
  constructor(
    readonly topic: string,
    readonly code: string,
    readonly seq: number,
    readonly kind: 'snapshot' | 'patch',
    readonly frame: string,
    readonly row: Row,
    readonly crc: number,
    private operations?: readonly PatchOp[],
  ) {}

  /** The operations, for patches (undefined for snapshots). */
  get ops(): readonly PatchOp[] | undefined {
    if (this.operations === undefined && this.kind === 'patch') this.operations = (JSON.parse(this.frame) as { ops: PatchOp[] }).ops;
    return this.operations;
  }

  /** The frame's UTF-8 bytes (one Buffer for every recipient). */
  get bytes(): Buffer {
    return (this.encoded ??= Buffer.from(this.frame));
  }
}
