import { describe, expect, it } from 'vitest';
import { ConfigError, defaultConfig, loadConfig } from '../../src/config/config.js';

describe('config', () => {
  it('has working defaults', () => {
    const c = defaultConfig();
    expect(c.PORT).toBe(8080);
    expect(c.UPSTREAM_URL).toBeUndefined();
    expect(c.KOSPI_FAMILY).toBe('v2');
    expect(c.KOSDAQ_FAMILY).toBe('v3');
  });
  it('flags override the environment', () => {
    const c = loadConfig({ PORT: '9000', KOSPI_FAMILY: 'v3' }, ['--port', '9100', '--log-level', 'warn']);
    expect(c.PORT).toBe(9100);
    expect(c.KOSPI_FAMILY).toBe('v3');
    expect(c.LOG_LEVEL).toBe('warn');
  });
  it.each([
    [{ PORT: 'abc' }, [], 'PORT'],
    [{ PORT: '70000' }, [], 'PORT'],
    [{ KOSDAQ_FAMILY: 'v4' }, [], 'KOSDAQ_FAMILY'],
    [{ UPSTREAM_URL: 'not a url' }, [], 'UPSTREAM_URL'],
    [{ UPSTREAM_URL: 'http://x.test' }, [], 'UPSTREAM_API_KEY'],
    [{}, ['--nope', '1'], '--nope'],
    [{ AUTH_JWT_SECRET: 'short' }, [], 'AUTH_JWT_SECRET'],
    [{ ROUND_HOLD_MS: '600' }, [], 'ROUND_HOLD_MS'],
    [{ POLL_BASE_MS: '200', ROUND_HOLD_MS: '150' }, [], 'ROUND_HOLD_MS'],
  ])('a bad setting names itself: %j %j', (env, argv, name) => {
    let err: unknown;
    try {
      loadConfig(env, argv as string[]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe(name);
    expect((err as Error).message).toContain(name);
  });
  it('never echoes a secret value', () => {
    try {
      loadConfig({ AUTH_JWT_SECRET: 'sh0rt' });
    } catch (e) {
      expect((e as Error).message).not.toContain('sh0rt');
    }
  });
});
