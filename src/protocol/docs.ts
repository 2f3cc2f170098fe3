import { z } from 'zod';
import { ERROR_CODES } from './errors.js';
import { ClientMsg, ServerFrame } from './messages.js';

/**
 * Documentation generated from the protocol definitions: the error-code
 * table of docs/PROTOCOL.md and the JSON Schema of every message.
 */

/** The Markdown table of wire error codes (docs/PROTOCOL.md §6). */
export function errorTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, e]) => `| \`${code}\` | ${e.retryable ? 'yes' : 'no'} | ${e.text} |`);
  return ['| code | retryable | meaning |', '|---|---|---|', ...rows, ''].join('\n');
}

/** JSON Schema (draft 2020-12) of client messages and server frames, generated from the zod schemas. */
export function protocolJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'urn:krx-bridge:protocol:v1',
    title: 'krx-bridge protocol v1',
    description:
      'Client messages (ClientMessage) and server frames (ServerFrame) of protocol v1. Generated from src/protocol/messages.ts; see docs/PROTOCOL.md.',
    $defs: {
      ClientMessage: z.toJSONSchema(ClientMsg, { io: 'input', unrepresentable: 'any' }),
      ServerFrame: z.toJSONSchema(ServerFrame, { io: 'output', unrepresentable: 'any' }),
    },
  };
}
