/**
 * Whether requests kept to a token bucket's limit, from their arrival times alone (the
 * emulator's request log): in every stretch from one request to a later one, no more arrived
 * than the bucket allows, `burst` plus `perSecond` for the time between them. Quadratic in the
 * requests: fine for the few thousand of a test or a benchmark.
 */
export function overLimit(
  times: readonly number[],
  limit: { perSecond: number; burst: number },
): { from: number; to: number; count: number } | null {
  const sorted = [...times].sort((a, b) => a - b);
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i; j < sorted.length; j++) {
      const from = sorted[i] as number;
      const to = sorted[j] as number;
      const count = j - i + 1;
      // The log's times are whole ms: one ms of slack on each end.
      if (count > limit.burst + (limit.perSecond * (to - from + 2)) / 1000)
        return { from, to, count };
    }
  }
  return null;
}

/** The most requests that arrived within any `windowMs` (a sliding window). */
export function busiestWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] as number) - (sorted[start] as number) >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
