/** Small statistics for benchmark samples: medians across rounds, percentiles within one. */

/** The q-quantile (0..1) of `values` by nearest rank; sorts a copy. NaN for no values. */
export function percentile(values: ArrayLike<number>, q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(values: ArrayLike<number>): number {
  return percentile(values, 0.5);
}

/** A growable buffer of latencies (ms) that does not allocate per sample. */
export class Samples {
  #data = new Float64Array(1 << 16);
  #length = 0;

  push(value: number): void {
    if (this.#length === this.#data.length) {
      const bigger = new Float64Array(this.#data.length * 2);
      bigger.set(this.#data);
      this.#data = bigger;
    }
    this.#data[this.#length++] = value;
  }

  get length(): number {
    return this.#length;
  }

  values(): Float64Array {
    return this.#data.subarray(0, this.#length);
  }

  clear(): void {
    this.#length = 0;
  }
}

/** Rotates `items` by `round`, so every peer runs first, second, ... in turn. */
export function rotate<T>(items: readonly T[], round: number): T[] {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
