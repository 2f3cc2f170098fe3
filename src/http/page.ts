/**
 * The placeholder page served at `/` when no static directory provides an
 * `index.html`.
 */

/** HTML of the placeholder page; `wsPath` is where the WebSocket gateway listens. */
export function placeholderPage(version: string, wsPath = '/ws'): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>krx-bridge</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .25em}</style>
</head>
<body>
<h1>krx-bridge is running</h1>
<p>Version ${escapeHtml(version)}. Realtime KRX market data over WebSocket at <code>${escapeHtml(wsPath)}</code>.</p>
<ul>
<li><a href="/status">/status</a>: feeds, clients and the upstream budget</li>
<li><a href="/metrics">/metrics</a>: Prometheus metrics</li>
<li><a href="/healthz">/healthz</a> and <a href="/readyz">/readyz</a>: health checks</li>
</ul>
</body>
</html>
`;
}

/** Escapes the five HTML special characters. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
