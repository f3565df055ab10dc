/**
 * A seeded random source (mulberry32), so that a soak's choices (ops, amounts, faults, wallet
 * acts) follow from its printed seed. Timing still differs between runs: a seed replays the
 * dice, not the scheduler.
 */
export class Random {
  readonly seed: number;
  #state: number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    this.#state = this.seed;
  }

  /** In [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** One of `weights`' keys, with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let at = this.next() * total;
    for (const [key, w] of entries) {
      at -= w;
      if (at < 0) return key;
    }
    return (entries.at(-1) as [K, number])[0];
  }
}
