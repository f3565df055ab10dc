/**
 * The price of one bitcoin in the game's fiat currency (`fiat`), read at start and every
 * `refreshMs` and handed to each room. A failed read keeps the last price and is said once until
 * a read answers again; reads never overlap.
 *
 * Footprint: one timer per process, one API read per `refreshMs`.
 */
import type { BtcUsdPrice } from '../port/port.js';
import type { LightningLogger } from './logger.js';

/** What a room shows: the currency, the price of 1 BTC in it, and when the service took it. */
export interface PriceReading {
  currency: string;
  /** The price of one bitcoin in `currency`. */
  btcPrice: number;
  /** When the service priced it, epoch ms. */
  at: number;
}

export class PriceFeed {
  readonly #read: () => Promise<BtcUsdPrice>;
  readonly #settings: { refreshMs: number };
  readonly #logger: LightningLogger;
  readonly #listeners = new Set<(price: PriceReading) => void>();
  #last: PriceReading | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  #reading = false;
  #failing = false;

  constructor(
    read: () => Promise<BtcUsdPrice>,
    settings: { refreshMs: number },
    logger: LightningLogger,
  ) {
    this.#read = read;
    this.#settings = settings;
    this.#logger = logger;
  }

  /** The last price read, or null before the first answer. */
  get current(): PriceReading | null {
    return this.#last;
  }

  /** Reads now, then every `refreshMs`, until `stop()`. */
  start(): void {
    if (this.#timer) return;
    void this.refresh();
    this.#timer = setInterval(() => void this.refresh(), this.#settings.refreshMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#listeners.clear();
  }

  /** Calls `listener` with each new reading; returns the function that stops it. */
  onPrice(listener: (price: PriceReading) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** One read (skipped while one is running); resolves once it answered or failed. */
  async refresh(): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    try {
      const answer = await this.#read();
      const reading = {
        // The service publishes the price in US dollars only (options.ts refuses another).
        currency: 'USD',
        btcPrice: answer.btcUsdPrice,
        at: answer.btcUsdTimestamp,
      };
      if (this.#failing) {
        this.#failing = false;
        this.#logger.info('the BTC/USD price is read again (GET /v0/btcusd)');
      }
      const last = this.#last;
      if (last && last.btcPrice === reading.btcPrice && last.at === reading.at) return;
      this.#last = reading;
      for (const listener of this.#listeners) {
        try {
          listener(reading);
        } catch (err) {
          this.#logger.warn(`a price listener threw: ${(err as Error).message}`);
        }
      }
    } catch (err) {
      if (this.#failing) return;
      this.#failing = true;
      this.#logger.warn(
        `could not read the BTC/USD price (GET /v0/btcusd): ${(err as Error).message}; ${
          this.#last ? 'keeping the last price' : 'the price stays unknown (0)'
        } until it answers (said once)`,
      );
    } finally {
      this.#reading = false;
    }
  }
}
