/**
 * ISIN (standard code) check digits. Pure functions.
 */

/** The digit string of an ISIN body: letters become 10..35, digits stay. */
function expand(body: string): string {
  let out = '';
  for (const ch of body.toUpperCase()) {
    const c = ch.charCodeAt(0);
    if (c >= 48 && c <= 57) out += ch;
    else if (c >= 65 && c <= 90) out += String(c - 55);
    else throw new Error(`invalid ISIN character: ${ch}`);
  }
  return out;
}

/** The check digit of an 11-character ISIN body (Luhn over the expanded digits). */
export function isinCheckDigit(body: string): number {
  const digits = expand(body);
  let sum = 0;
  // The check digit will be appended, so the rightmost body digit is doubled.
  for (let i = digits.length - 1, double = true; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** A full ISIN from its 11-character body. */
export function isin(body: string): string {
  return body + String(isinCheckDigit(body));
}

/** The Korean standard code of a domestic short code: KR7 + code + 00 + check digit. */
export function krStandardCode(shortCode: string): string {
  return isin(`KR7${shortCode}00`);
}

/** True when a 12-character string is a well-formed ISIN with a valid check digit. */
export function isValidIsin(code: string): boolean {
  if (!/^[A-Z]{2}[0-9A-Z]{9}\d$/.test(code)) return false;
  return isinCheckDigit(code.slice(0, 11)) === Number(code[11]);
}
