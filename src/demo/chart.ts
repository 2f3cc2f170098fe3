import {
  CandlestickSeries,
  createChart,
  HistogramSeries,
  LineStyle,
  type IChartApi,
  type IPriceLine,
  type ISeriesApi,
  type UTCTimestamp,
} from 'lightweight-charts';
import type { IntradayRow, PriceRow } from '../client/index.js';
import { CandleBook, type Candle } from './bars.js';
import { clock, fmtInt, kstDate } from './format.js';

/**
 * The intraday chart of the selected symbol (lightweight-charts): 1-minute
 * candles of today from the `intraday` resource, extended live by `price`
 * rows, with volume below and the previous close as a dashed line. Up
 * candles are red and down candles blue (Korean convention).
 */

/** Loads a symbol's intraday rows (any order). */
export type IntradayLoader = (code: string) => Promise<readonly IntradayRow[]>;

const UP = '#f0455a';
const DOWN = '#3b82f6';
const UP_VOL = 'rgba(240, 69, 90, 0.45)';
const DOWN_VOL = 'rgba(59, 130, 246, 0.45)';

/** The chart panel. */
export class IntradayChart {
  private readonly chart: IChartApi;
  private readonly candles: ISeriesApi<'Candlestick'>;
  private readonly volume: ISeriesApi<'Histogram'>;
  private book: CandleBook | undefined;
  private code: string | undefined;
  private generation = 0;
  private prevLine: IPriceLine | undefined;
  private prevClose: number | undefined;
  /** The shown symbol's latest `price` row that came while its history loaded: applied once it has. */
  private pending: PriceRow | undefined;

  /**
   * A chart in `container`; `loader` fetches a symbol's history; `now` is
   * the clock (ms epoch); `onError` hears of a reload that failed (the
   * chart keeps what it shows).
   */
  constructor(
    private readonly container: HTMLElement,
    private readonly loader: IntradayLoader,
    private readonly now: () => number = Date.now,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {
    const css = getComputedStyle(container);
    this.chart = createChart(container, {
      autoSize: true,
      layout: {
        background: { color: 'transparent' },
        textColor: css.getPropertyValue('--muted').trim() || '#8a99ad',
        fontFamily: css.fontFamily,
        fontSize: 11,
      },
      grid: { vertLines: { color: 'rgba(148, 163, 184, 0.07)' }, horzLines: { color: 'rgba(148, 163, 184, 0.07)' } },
      rightPriceScale: { borderVisible: false, scaleMargins: { top: 0.08, bottom: 0.26 } },
      timeScale: { borderVisible: false, timeVisible: true, secondsVisible: false, rightOffset: 4, minBarSpacing: 2 },
      crosshair: { horzLine: { labelBackgroundColor: '#334155' }, vertLine: { labelBackgroundColor: '#334155' } },
      localization: { timeFormatter: (t: number) => clock(((t % 86_400) + 86_400) % 86_400), priceFormatter: (p: number) => fmtInt(p) },
    });
    this.candles = this.chart.addSeries(CandlestickSeries, {
      upColor: UP,
      downColor: DOWN,
      borderUpColor: UP,
      borderDownColor: DOWN,
      wickUpColor: UP,
      wickDownColor: DOWN,
      priceLineVisible: true,
    });
    this.volume = this.chart.addSeries(HistogramSeries, {
      priceScaleId: 'vol',
      priceFormat: { type: 'volume' },
      lastValueVisible: false,
      priceLineVisible: false,
    });
    this.chart.priceScale('vol').applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
  }

  /**
   * Shows a symbol: loads its history, then follows its trades. Resolves
   * with the number of candles. `reloaded`: asked again because a trade was
   * of a new day; history that still ends hours after that trade is
   * another day's (the upstream's bars of the last session, before the
   * day's first), so the day's chart starts from nothing, not from a
   * reload again.
   */
  async show(code: string, last?: PriceRow, reloaded = false): Promise<number> {
    const gen = ++this.generation;
    this.code = code;
    this.book = undefined;
    this.pending = undefined;
    this.setPrevClose(undefined);
    this.candles.setData([]);
    this.volume.setData([]);
    this.container.dataset.bars = '0';
    this.container.setAttribute('aria-busy', 'true');
    const rows = await this.loader(code);
    if (gen !== this.generation) return 0;
    const book = new CandleBook(kstDate(this.now()));
    book.load(rows);
    // A row that came while the history loaded is newer than the one the chart was shown with (the close, say, at 15:30).
    const latest = this.pending ?? last;
    this.pending = undefined;
    if (reloaded && latest !== undefined && book.newDay(latest.trdTm)) book.load([]);
    this.book = book;
    this.redraw();
    if (latest !== undefined) this.tick(code, latest);
    this.container.removeAttribute('aria-busy');
    this.chart.timeScale().fitContent();
    return book.candles().length;
  }

  /**
   * Applies a `price` row of `code` (ignored unless it is the shown
   * symbol); one that comes while its history loads is applied once it has
   * (the latest of them).
   */
  tick(code: string, row: PriceRow): void {
    if (code !== this.code) return;
    const prev = typeof row.trdPrc === 'number' && typeof row.cmpprevddPrc === 'number' ? row.trdPrc - row.cmpprevddPrc : undefined;
    if (prev !== this.prevClose) this.setPrevClose(prev);
    const book = this.book;
    if (book === undefined) {
      this.pending = row;
      return;
    }
    if (typeof row.trdPrc !== 'number') return;
    const effect = book.trade(row.trdPrc, row.trdTm, row.accTrdvol);
    if (effect.kind === 'reset') {
      // Once: the history is asked for again, and what it still lacks starts from this trade.
      this.book = undefined;
      this.show(code, row, true).catch(this.onError);
      return;
    }
    if (effect.kind === 'ignored') return;
    this.candles.update(candleData(effect.candle));
    this.volume.update(volumeData(effect.candle));
    this.container.dataset.bars = String(book.candles().length);
    this.container.dataset.last = String(effect.candle.close);
  }

  /** The shown symbol's code. */
  get shown(): string | undefined {
    return this.code;
  }

  private redraw(): void {
    const list = this.book?.candles() ?? [];
    this.candles.setData(list.map(candleData));
    this.volume.setData(list.map(volumeData));
    // What the chart shows last, for a reader of the page (and its tests): the bars, and the last close.
    this.container.dataset.bars = String(list.length);
    this.container.dataset.last = String(list.at(-1)?.close ?? '');
  }

  private setPrevClose(price: number | undefined): void {
    this.prevClose = price;
    if (this.prevLine !== undefined) this.candles.removePriceLine(this.prevLine);
    this.prevLine =
      price === undefined
        ? undefined
        : this.candles.createPriceLine({
            price,
            color: 'rgba(148, 163, 184, 0.55)',
            lineWidth: 1,
            lineStyle: LineStyle.Dashed,
            axisLabelVisible: true,
            title: 'prev',
          });
  }
}

function candleData(c: Candle) {
  return { time: c.time as UTCTimestamp, open: c.open, high: c.high, low: c.low, close: c.close };
}

function volumeData(c: Candle) {
  return { time: c.time as UTCTimestamp, value: c.volume, color: c.close >= c.open ? UP_VOL : DOWN_VOL };
}
