/**
 * The close code the WebSocket layer (ws) sends when it fails a client's
 * frame, by the ws error code: 1007 for text that is not UTF-8, 1009 for a
 * message over `maxPayload`, 1008 for too many fragments, 1002 for any
 * other framing violation (RFC 6455 §7.4.1). Undefined for errors that are
 * not ws frame errors (e.g. a reset socket).
 */
export function closeCodeOfWsError(code: string | undefined): number | undefined {
  if (code === undefined || !code.startsWith('WS_ERR_')) return undefined;
  if (code === 'WS_ERR_INVALID_UTF8') return 1007;
  if (code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' || code === 'WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH') return 1009;
  if (code === 'WS_ERR_TOO_MANY_BUFFERED_PARTS') return 1008;
  return 1002;
}
