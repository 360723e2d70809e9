// internal/metrics owns the server's Prometheus metrics (served at /metrics): requests by
// verb, resource and code with their latency, requests in flight, registered watchers, stored
// objects per resource. prom-client does the bookkeeping and the text format.
// Imports: nothing from the project (prom-client).

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface RequestLabels {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  code: string;
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<keyof RequestLabels | 'component'>;
  private readonly latency: Histogram<'verb' | 'group' | 'version' | 'resource' | 'subresource' | 'scope' | 'component'>;
  readonly inflight: Gauge<'request_kind'>;
  readonly watchers: Gauge<'group' | 'kind'>;
  private readonly objects: Gauge<'resource'>;

  constructor(perResource: () => Iterable<{ resource: string; objects: number; watchers: number }>) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, group, version, resource, scope, component, and HTTP response code.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, group, version, resource, subresource, scope and component.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
      registers: [this.registry],
    });
    this.inflight = new Gauge({
      name: 'apiserver_current_inflight_requests',
      help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'],
      registers: [this.registry],
    });
    this.watchers = new Gauge({
      name: 'apiserver_registered_watchers',
      help: 'Number of currently registered watchers for a given resources',
      labelNames: ['group', 'kind'],
      registers: [this.registry],
      collect: () => {
        this.watchers.reset();
        for (const r of perResource()) {
          const slash = r.resource.lastIndexOf('.');
          if (r.watchers > 0) this.watchers.set({ group: slash < 0 ? '' : r.resource.slice(slash + 1), kind: slash < 0 ? r.resource : r.resource.slice(0, slash) }, r.watchers);
        }
      },
    });
    this.objects = new Gauge({
      name: 'apiserver_storage_objects',
      help: 'Number of stored objects at the time of last check split by kind.',
      labelNames: ['resource'],
      registers: [this.registry],
      collect: () => {
        this.objects.reset();
        for (const r of perResource()) this.objects.set({ resource: r.resource }, r.objects);
      },
    });
  }

  observe(labels: RequestLabels, seconds: number): void {
    const { code, ...rest } = labels;
    this.requests.inc({ ...rest, code, component: 'apiserver' });
    this.latency.observe({ ...rest, component: 'apiserver' }, seconds);
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
