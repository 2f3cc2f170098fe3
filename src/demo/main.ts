import { KrxClient } from '../client/index.js';
import { DemoApp } from './app.js';
import { byId } from './dom.js';
import type { ServerStatus } from './status.js';
import { DEFAULT_CODES, SymbolNames } from './symbols.js';
import { Watchlist } from './watchlist.js';

/**
 * Entry of the demo page (bundled by scripts/build-demo.ts into
 * dist/public/app.js): connects the SDK to the bridge that served the page
 * (or to `?ws=` when given) and starts the app.
 */

/** The WebSocket URL of the bridge that served `loc` (`ws(s)://host/ws`), or the page's `?ws=` parameter. */
function bridgeUrl(loc: Pick<Location, 'protocol' | 'host' | 'search'>): string {
  const given = new URLSearchParams(loc.search).get('ws');
  if (given) return given;
  return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}/ws`;
}

function storage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

function main(): void {
  const client = new KrxClient(bridgeUrl(location));
  const fetchJson = (url: string) => fetch(url, { headers: { accept: 'application/json' } });
  const app = new DemoApp({
    client,
    names: new SymbolNames(fetchJson),
    watchlist: new Watchlist(DEFAULT_CODES, storage()),
    fetchStatus: async () => {
      const res = await fetchJson('/status');
      if (!res.ok) throw new Error(`/status answered ${res.status}`);
      return (await res.json()) as ServerStatus;
    },
    els: {
      board: byId<HTMLTableElement>('board'),
      book: byId('book'),
      chart: byId('chart'),
      pill: byId('conn'),
      market: byId('market'),
      status: byId('health'),
      search: byId<HTMLInputElement>('search'),
      matches: byId('matches'),
      marketButtons: [...document.querySelectorAll<HTMLButtonElement>('button[data-market]')],
      selName: [...document.querySelectorAll<HTMLElement>('.sel-name')],
      selPrice: byId('sel-price'),
      selChange: byId('sel-change'),
      notice: byId('notice'),
    },
  });
  app.start();
  window.addEventListener('pagehide', () => void client.close());
}

main();
