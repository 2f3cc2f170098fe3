/**
 * The row a topic carries, as the server normalises it and the SDK holds
 * it: upstream field names, values normalised (numbers are numbers, codes,
 * dates and times strings, placeholders `null`). Shared by the server and
 * the SDK; it imports nothing. See docs/PROTOCOL.md §2.
 */

/** A normalised upstream value. */
export type Scalar = string | number | null;

/** A normalised flat row: upstream field names to values. */
export type Row = Record<string, Scalar>;
