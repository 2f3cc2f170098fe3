/**
 * Protocol v1: the wire contract between the bridge and its clients.
 * See docs/PROTOCOL.md.
 */
export * from './constants.js';
export * from './topics.js';
export * from './errors.js';
export * from './resources.js';
export * from './messages.js';
export * from './crc32.js';
