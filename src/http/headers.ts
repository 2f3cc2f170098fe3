/**
 * Security headers of HTTP responses (docs/OPERATIONS.md §HTTP). Every
 * response says `nosniff`, so no browser reads a JSON error as a script or
 * a page. Pages also get a Content-Security-Policy that allows only the
 * bridge's own scripts, styles and connections (the WebSocket included),
 * may not be framed by another site (clickjacking), and send no referrer.
 */

/** Headers of every response. */
export const BASE_HEADERS: Readonly<Record<string, string>> = { 'X-Content-Type-Options': 'nosniff' };

/**
 * The one inline style the demo page runs: the chart library's attribution
 * logo (lightweight-charts adds it as a `<style>` element). Allowed by its
 * hash, so no other inline style is; the browser test fails when a new
 * version of the library changes it.
 */
const CHART_LOGO_STYLE = "'sha256-3pRED1tOXas1FXFoPb9TGCjmYe9XQsmO9OV23khV2nY='";

const STRICT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  `style-src 'self' ${CHART_LOGO_STYLE}`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The example pages (`/examples/…`) are plain pages meant to be copied, with
 * their script and style inline; they may run those, nothing from elsewhere.
 */
const EXAMPLE_CSP = STRICT_CSP.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'").replace(
  `style-src 'self' ${CHART_LOGO_STYLE}`,
  "style-src 'self' 'unsafe-inline'",
);

/** The placeholder page: one inline style, no script at all. */
const PLACEHOLDER_CSP = STRICT_CSP.replace("script-src 'self'", "script-src 'none'").replace(
  `style-src 'self' ${CHART_LOGO_STYLE}`,
  "style-src 'unsafe-inline'",
);

/** Which page policy applies. */
export type PageKind = 'app' | 'example' | 'placeholder';

/** Headers of an HTML page of `kind`. */
export function pageHeaders(kind: PageKind): Record<string, string> {
  const csp = kind === 'app' ? STRICT_CSP : kind === 'example' ? EXAMPLE_CSP : PLACEHOLDER_CSP;
  return {
    ...BASE_HEADERS,
    'Content-Security-Policy': csp,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
  };
}
