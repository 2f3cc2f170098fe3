/**
 * Wire facts of the upstream that are not endpoint-specific: header names and
 * the documented error bodies (spec document 1, part 7; DESIGN.md §2).
 * Shared by the client (to recognise them) and the simulator (to send them).
 */

/** Request header that carries the API key. */
export const API_KEY_HEADER = 'apikey';
/** Response header: calls allowed per day. */
export const LIMIT_HEADER = 'x-ratelimit-limit-day';
/** Response header: calls left today. */
export const REMAINING_HEADER = 'x-ratelimit-remaining-day';

/** Documented error bodies, by situation. */
export const ERROR_BODIES = {
  /** 400: the sub-market (market) or issue code is not valid. */
  invalidCode: { error: '소속시장 또는 종목코드가 유효하지 않습니다.' },
  /** 400: not the provision time of the (same-day closing or realtime) data. */
  notProvided: { error: '당일 종가 데이터 제공시간이 아닙니다.' },
  /** 400: a required parameter is missing or malformed. */
  badParameter: { error: '입력 에러입니다.입력하신 데이터를 다시 확인하시기 바랍니다' },
  /** 401: no `apikey` header. */
  noKey: { message: 'No API key found in request' },
  /** 401: unknown key. */
  badKey: { message: 'Invalid authentication credentials' },
  /** 404: no route. */
  notFound: { message: 'no Route matched with those values' },
  /** 429: daily limit exceeded. */
  rateLimited: { message: 'API rate limit exceeded' },
} as const;

/**
 * Classifies the text of a 400 `{ error }` body: an invalid market/code, a
 * call outside the provision time, or another bad request. The Korean texts
 * vary; the classification keys on the words that carry the meaning.
 */
export function classify400(text: string): 'invalid_code' | 'not_provided_now' | 'bad_request' {
  if (/제공\s*시[간각]|시간이\s*아닙|provision|not\s+(the\s+)?provided/i.test(text)) return 'not_provided_now';
  // Not a bare "시장" (market): it also occurs in texts about market hours.
  if (/^\s*소속|소속\s*시장|종목\s*코드|유효하지|invalid/i.test(text)) return 'invalid_code';
  return 'bad_request';
}
