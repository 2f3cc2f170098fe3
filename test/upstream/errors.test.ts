import { describe, expect, it } from 'vitest';
import { UPSTREAM_ERROR_CODES, UpstreamError, errorFromResponse, isUpstreamError, upstreamText, type UpstreamErrorCode } from '../../src/upstream/errors.js';
import { ERROR_BODIES, classify400 } from '../../src/upstream/wire.js';

const json = (o: unknown) => JSON.stringify(o);

describe('errorFromResponse', () => {
  const cases: [string, number, string, UpstreamErrorCode, boolean][] = [
    ['400 invalid code', 400, json(ERROR_BODIES.invalidCode), 'invalid_code', false],
    ['400 outside provision time', 400, json(ERROR_BODIES.notProvided), 'not_provided_now', true],
    ['400 other', 400, json(ERROR_BODIES.badParameter), 'bad_request', false],
    ['400 realtime provision text', 400, json({ error: '실시간 시세 제공 시간이 아닙니다.' }), 'not_provided_now', true],
    ['400 invalid market code text', 400, json({ error: '시장코드가 유효하지 않습니다.' }), 'invalid_code', false],
    ['400 non-JSON', 400, 'Bad Request', 'bad_request', false],
    ['401 no key', 401, json(ERROR_BODIES.noKey), 'unauthorized', false],
    ['401 bad key', 401, json(ERROR_BODIES.badKey), 'unauthorized', false],
    ['403', 403, json({ message: 'forbidden' }), 'unauthorized', false],
    ['404', 404, json(ERROR_BODIES.notFound), 'not_found', false],
    ['405', 405, '', 'bad_request', false],
    ['429', 429, json(ERROR_BODIES.rateLimited), 'rate_limited', true],
    ['500', 500, json({ message: 'An unexpected error occurred' }), 'upstream_error', true],
    ['502', 502, '<html><body>502 Bad Gateway</body></html>', 'upstream_error', true],
    ['503', 503, json({ message: 'failure to get a peer from the ring-balancer' }), 'upstream_error', true],
    ['500 non-JSON', 500, 'Internal Server Error', 'upstream_error', true],
    ['304', 304, '', 'upstream_error', false],
  ];

  it.each(cases)('%s', (_name, status, body, code, retryable) => {
    const err = errorFromResponse(status, body, 'v3.realtime.multiquote.price');
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('UpstreamError');
    expect(err.code).toBe(code);
    expect(err.status).toBe(status);
    expect(err.retryable).toBe(retryable);
    expect(err.endpointId).toBe('v3.realtime.multiquote.price');
    expect(err.message.startsWith(`v3.realtime.multiquote.price: HTTP ${status}`)).toBe(true);
  });

  it("quotes the upstream's own text", () => {
    expect(errorFromResponse(401, json(ERROR_BODIES.badKey), 'e').message).toBe('e: HTTP 401 "Invalid authentication credentials"');
    expect(errorFromResponse(400, json(ERROR_BODIES.invalidCode), 'e').message).toContain('소속시장 또는 종목코드가 유효하지 않습니다.');
    expect(errorFromResponse(502, '<html>\n  <body>bad gateway</body>\n</html>', 'e').message).toBe('e: HTTP 502 "<html> <body>bad gateway</body> </html>"');
    expect(errorFromResponse(500, '', 'e').message).toBe('e: HTTP 500');
  });

  it('carries resetAt on a 429 only', () => {
    expect(errorFromResponse(429, json(ERROR_BODIES.rateLimited), 'e', { resetAt: 123 }).resetAt).toBe(123);
    expect(errorFromResponse(500, '', 'e', { resetAt: 123 }).resetAt).toBeUndefined();
  });

  it('removes secrets the upstream echoes', () => {
    const err = errorFromResponse(401, json({ message: 'key s3cret-key-123 is not valid' }), 'e', { secrets: ['s3cret-key-123'] });
    expect(err.message).not.toContain('s3cret-key-123');
    expect(err.code).toBe('unauthorized');
  });
});

describe('upstreamText', () => {
  it('takes error, then message, else the raw text, cut to 160 characters', () => {
    expect(upstreamText('{"error":"e","message":"m"}')).toBe('e');
    expect(upstreamText('{"message":"m"}')).toBe('m');
    expect(upstreamText('{"other":1}')).toBe('{"other":1}');
    const long = upstreamText('x'.repeat(500));
    expect(long).toHaveLength(160);
    expect(long.endsWith('...')).toBe(true);
  });
});

describe('classify400', () => {
  it.each([
    [ERROR_BODIES.invalidCode.error, 'invalid_code'],
    [ERROR_BODIES.notProvided.error, 'not_provided_now'],
    [ERROR_BODIES.badParameter.error, 'bad_request'],
    ['시장 운영 시간이 아닙니다', 'not_provided_now'],
    ['Invalid issue code', 'invalid_code'],
    ['data is not provided at this time', 'not_provided_now'],
    ['', 'bad_request'],
  ])('%s -> %s', (text, code) => {
    expect(classify400(text)).toBe(code);
  });
});

describe('UpstreamError', () => {
  it('defaults retryable by code and can override it', () => {
    const retryable = UPSTREAM_ERROR_CODES.filter((c) => new UpstreamError(c, 'x').retryable);
    expect(retryable).toStrictEqual(['not_provided_now', 'rate_limited', 'upstream_error', 'timeout', 'network', 'malformed_body']);
    expect(new UpstreamError('upstream_error', 'x', { retryable: false }).retryable).toBe(false);
  });

  it('keeps its cause and serialises as wire data', () => {
    const cause = new Error('socket hang up');
    const err = new UpstreamError('network', 'e: network error', { endpointId: 'e', cause });
    expect(err.cause).toBe(cause);
    expect(JSON.parse(JSON.stringify(err))).toStrictEqual({ code: 'network', message: 'e: network error', retryable: true });
    const limited = new UpstreamError('rate_limited', 'spent', { status: 429, resetAt: 5 });
    expect(limited.toJSON()).toStrictEqual({ code: 'rate_limited', message: 'spent', retryable: true, status: 429, resetAt: 5 });
  });

  it('is recognised by isUpstreamError, optionally by code', () => {
    const err = new UpstreamError('timeout', 'x');
    expect(isUpstreamError(err)).toBe(true);
    expect(isUpstreamError(err, 'timeout', 'network')).toBe(true);
    expect(isUpstreamError(err, 'network')).toBe(false);
    expect(isUpstreamError(new Error('x'))).toBe(false);
  });
});
