/**
 * Reading an HTTP request target without trusting it. The reader lives in
 * src/gateway/target.ts, below both layers that read requests, so that the
 * routes and the WebSocket upgrade share it (docs/OPERATIONS.md §1).
 */

/** The target reader (`parseTarget`) and the checks of every request (`readRequest`), as the gateway reads them. */
export { parseTarget, readRequest, type ReadRequest, type RequestHead } from '../gateway/target.js';
