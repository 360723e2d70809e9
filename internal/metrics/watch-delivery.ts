// internal/metrics/watch-delivery owns the metrics of watch delivery rounds (the watch cache's
// delivery-rounds keeps the figures; it imports nothing, so they are read here at each scrape):
// how long a change waits for the round that writes it to its watchers, how long rounds run,
// and how many streams they wake. Under a watch fan-out the wait is where a saturated event
// loop shows first: rounds come as fast as the loop turns, and with a loop busy writing every
// stream's bytes the wait grows while the round itself stays short.
// Imports: series.

import { Counter, type Registry } from 'prom-client';
import { ReadHistogram, type HistogramReading } from './series.js';

/** What delivery-rounds counts (its RoundStats, typed here without importing the watch cache). */
export interface DeliveryRoundFigures {
  readonly lag: HistogramReading;
  readonly duration: HistogramReading;
  readonly woken: number;
}

export function registerWatchDeliveryMetrics(registry: Registry, bounds: readonly number[], figures: () => DeliveryRoundFigures): void {
  new ReadHistogram(
    'clusterd_watch_delivery_lag_seconds',
    'Time from a change (or another wake) being queued for watchers to the start of the delivery round that writes it to their streams.',
    bounds,
    () => figures().lag,
    [registry],
  );
  new ReadHistogram(
    'clusterd_watch_delivery_round_duration_seconds',
    'How long each watch delivery round ran: encoding the queued events and writing them to every woken stream.',
    bounds,
    () => figures().duration,
    [registry],
  );
  new Counter({
    name: 'clusterd_watch_delivery_woken_total',
    help: 'Watch consumers woken by delivery rounds (one per stream written to in a round).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(figures().woken);
    },
  });
}
