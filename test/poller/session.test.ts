import { describe, expect, it } from 'vitest';
import { kstParts, nextKstTime, sessionAt, sessionEnd } from '../../src/poller/session.js';

// 2026-11-20 is a Friday. KST = UTC+9.
const kst = (hhmm: string, day = '2026-11-20') => Date.parse(`${day}T${hhmm}:00+09:00`);

describe('KST session clock', () => {
  it.each([
    ['08:29', 'closed'],
    ['08:30', 'pre'],
    ['09:00', 'regular'],
    ['15:19', 'regular'],
    ['15:20', 'closing_auction'],
    ['15:30', 'closed'],
    ['15:40', 'after_close'],
    ['16:00', 'single_price'],
    ['17:59', 'single_price'],
    ['18:00', 'closed'],
  ])('%s is %s', (t, s) => expect(sessionAt(kst(t))).toBe(s));

  it('weekends are closed', () => {
    expect(sessionAt(kst('10:00', '2026-11-21'))).toBe('closed');
    expect(sessionAt(kst('10:00', '2026-11-22'))).toBe('closed');
  });

  it('parts and next times', () => {
    expect(kstParts(kst('00:30'))).toEqual({ date: '20261120', secondOfDay: 1800, weekday: 5 });
    expect(nextKstTime('06:30', kst('05:00'))).toBe(kst('06:30'));
    expect(nextKstTime('06:30', kst('06:30'))).toBe(kst('06:30', '2026-11-21'));
    expect(sessionEnd(kst('10:00'))).toBe(kst('18:00'));
    expect(sessionEnd(kst('18:30'))).toBeUndefined();
  });
});
