/**
 * Which players' addresses the service serves, asked once per address and kept for an hour for
 * every room of the process (a failed read is not kept).
 *
 * Footprint: one entry per address seen; one API read per address per hour.
 */
import type { Clock } from '../clock.js';
import type { PaymentsPort, RegionSupport } from '../port/port.js';

const KEEP_MS = 3_600_000;
/** More addresses than this and the oldest are forgotten (asked again when seen again). */
const MAX_ENTRIES = 100_000;

export class RegionCache {
  readonly #port: Pick<PaymentsPort, 'regionOf'>;
  readonly #clock: Clock;
  readonly #known = new Map<string, { at: number; support: Promise<RegionSupport> }>();

  /** The port's regionOf takes an address as node's `isIP` accepts it (client-address.ts). */
  constructor(port: Pick<PaymentsPort, 'regionOf'>, clock: Clock) {
    this.#port = port;
    this.#clock = clock;
  }

  support(ip: string): Promise<RegionSupport> {
    const now = this.#clock.now();
    const known = this.#known.get(ip);
    if (known && now - known.at < KEEP_MS) return known.support;
    const support = this.#port.regionOf(ip);
    this.#known.delete(ip);
    this.#known.set(ip, { at: now, support });
    if (this.#known.size > MAX_ENTRIES) {
      this.#known.delete(this.#known.keys().next().value as string);
    }
    support.catch(() => {
      if (this.#known.get(ip)?.support === support) this.#known.delete(ip);
    });
    return support;
  }
}
