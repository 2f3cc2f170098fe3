/**
 * The upstream layer: endpoint catalogue, typed client, errors and the daily
 * call budget. Other folders import from here, not from the files inside.
 */

/** The endpoint catalogue and lookups. */
export { CATALOGUE, endpoint, findEndpoint } from './catalogue.js';
export type { Endpoint, EndpointId, EndpointKind, Envelope, ResponseSpec, ListSpec, Limits, CodeKind } from './catalogue.js';
export type { Provision } from '../market/provision.js';
/** Request paths to and from catalogue entries. */
export { renderPath, matchPath, requestParams } from './paths.js';
export type { PathMatch, Params } from './paths.js';
/** The lenient normaliser of upstream bodies. */
export { normaliseBody, normaliseRow, unwrap, coerceValue } from './normalise.js';
export type { Row, Scalar, RowIssue, Normalised, NormaliseResult } from './normalise.js';
/** The client. */
export { UpstreamClient } from './client.js';
export type { UpstreamClientOptions, UpstreamResult, CallOptions, CallEvent, UpstreamClientEvents } from './client.js';
/** Errors with stable codes. */
export { UpstreamError, UPSTREAM_ERROR_CODES, errorFromResponse, isUpstreamError } from './errors.js';
export type { UpstreamErrorCode, UpstreamErrorOptions } from './errors.js';
/** The daily call budget. */
export { Budget, nextReset } from './budget.js';
export type { BudgetSnapshot, BudgetEvents } from './budget.js';
/** Markdown of the catalogue (docs/UPSTREAM.md). */
export { catalogueMarkdown } from './docs.js';
