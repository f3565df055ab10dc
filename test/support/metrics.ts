/** Reading the package's metrics in a test: a reader the test pulls from, and one metric's points. */
import type { DataPoint } from '@opentelemetry/sdk-metrics';
import { MetricReader } from '@opentelemetry/sdk-metrics';

/** A reader the test pulls from: `collect()` is one collection, as an exporter's would be. */
export class PullReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** The data points of the package's metric `name` in one collection (none if it was never made). */
export async function pointsOf(reader: MetricReader, name: string): Promise<DataPoint<number>[]> {
  const { resourceMetrics } = await reader.collect();
  const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'colyseus-lightning');
  const metric = scope?.metrics.find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []) as DataPoint<number>[];
}
