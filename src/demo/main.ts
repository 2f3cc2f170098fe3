import { KrxClient } from '../client/index.js';
import { DemoApp } from './app.js';
import { ReplayControl, type RecordedDay, type ReplayChoice } from './replay.js';
import { byId } from './dom.js';
import type { ServerStatus } from './status.js';
import { DEFAULT_CODES, SymbolNames } from './symbols.js';
import { Watchlist } from './watchlist.js';

/**
 * Entry of the demo page (bundled by scripts/build-demo.ts into
 * dist/public/app.js): connects the SDK to the bridge that served the page
 * (or to `?ws=` when given), with the token of the page's `#token=` when
 * the bridge requires one, and starts the app; the replay control swaps
 * the live client for a replay's (`/ws/replay` through the SDK's `replay`
 * option) and back.
 */

/** The WebSocket URL of the bridge that served `loc` (`ws(s)://host/ws`), or the page's `?ws=` parameter. */
function bridgeUrl(loc: Pick<Location, 'protocol' | 'host' | 'search'>): string {
  const given = new URLSearchParams(loc.search).get('ws');
  if (given) return given;
  return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}/ws`;
}

/** Where the tab keeps the token it was opened with. */
const TOKEN_KEY = 'krx-bridge.token';

/**
 * The client token of the page's fragment (`/#token=…`), for a bridge that
 * requires one: a fragment is not sent with the page's request, so it stays
 * out of access logs on the way to the page. It is taken out of the address
 * (a shared link or screenshot would carry it) and kept for the tab's
 * reloads in its session storage.
 */
function pageToken(): string | undefined {
  const given = new URLSearchParams(location.hash.replace(/^#/, '')).get('token') || undefined;
  let kept: Storage | undefined;
  try {
    kept = window.sessionStorage;
  } catch {
    kept = undefined;
  }
  if (given === undefined) return kept?.getItem(TOKEN_KEY) ?? undefined;
  kept?.setItem(TOKEN_KEY, given);
  history.replaceState(null, '', location.pathname + location.search);
  return given;
}

function storage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

function main(): void {
  const url = bridgeUrl(location);
  const token = pageToken();
  const auth = token === undefined ? {} : { token };
  const client = new KrxClient(url, auth);
  const fetchJson = (url: string) =>
    fetch(url, { headers: { accept: 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) } });
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
      chartHint: byId('chart-hint'),
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
  const swap = (next: KrxClient, replay?: ReplayChoice): void => {
    const old = app.current;
    app.useClient(next, replay);
    void old.close();
  };
  const control = new ReplayControl(
    {
      open: byId<HTMLButtonElement>('replay-open'),
      form: byId<HTMLFormElement>('replay-form'),
      day: byId<HTMLSelectElement>('replay-day'),
      from: byId<HTMLInputElement>('replay-from'),
      to: byId<HTMLInputElement>('replay-to'),
      speed: byId<HTMLSelectElement>('replay-speed'),
      cancel: byId<HTMLButtonElement>('replay-cancel'),
      message: byId('replay-msg'),
      bar: byId('replay-bar'),
      live: byId<HTMLButtonElement>('replay-live'),
    },
    {
      days: async () => {
        const res = await fetchJson('/recordings');
        if (!res.ok)
          throw new Error(
            ((await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined)?.error?.message ?? `/recordings answered ${res.status}`,
          );
        return ((await res.json()) as { days: RecordedDay[] }).days;
      },
      play: (choice) => {
        const replay = new KrxClient(url, { ...auth, replay: choice });
        replay.on('update', (_topic, _row, change) => replay === app.current && control.clock(change.ts));
        replay.on('status', (s) => replay === app.current && s.reason === 'replay ended' && control.ended());
        swap(replay, choice);
        control.playing(choice);
      },
      live: () => {
        swap(new KrxClient(url, auth));
        control.live();
      },
    },
  );
  window.addEventListener('pagehide', () => void app.current.close());
}

main();
