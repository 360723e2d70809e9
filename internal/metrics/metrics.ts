// internal/metrics owns the server's Prometheus metrics (served at /metrics) under upstream
// kube-apiserver 1.32's names, types, labels, buckets and help texts, so that dashboards made
// for kube-apiserver work: requests (count, latency, in flight, long-running), requested
// deprecated APIs, watch events, stored objects and store latency (etcd_request_duration_seconds,
// measuring clusterd's own store). prom-client does the bookkeeping and the text format; this
// module keeps the per-request cost to a map lookup by caching each label set's children
// (series.ts: a child update is a number update, no label hashing).
// Metrics have a stability level and may be deprecated and hidden (stability.ts).
// Imports: nothing from the project (prom-client).

import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { CounterFamily, GaugeFamily, HistogramFamily, type CounterChild, type HistogramChild } from './series.js';
import { decoratedHelp, isHiddenIn, showHiddenMetrics, type BinaryVersion, type MetricLifecycle } from './stability.js';

/** upstream's request latency buckets (apiserver_request_duration_seconds, etcd_request_duration_seconds). */
const LATENCY_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

const REQUEST_LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
type RequestLabel = (typeof REQUEST_LABELS)[number];
/** One request's labels as upstream reports them (see request-labels.ts). */
export type RequestLabels = Record<RequestLabel, string>;

interface Definition extends MetricLifecycle {
  readonly help: string;
}

/** Every metric this module defines: help text and lifecycle. Order = order in /metrics. */
export const DEFINITIONS = {
  apiserver_request_total: {
    stability: 'STABLE',
    help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
  },
  apiserver_request_duration_seconds: {
    stability: 'STABLE',
    help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
  },
  apiserver_current_inflight_requests: {
    stability: 'STABLE',
    help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
  },
  apiserver_longrunning_requests: {
    stability: 'STABLE',
    help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
  },
  apiserver_requested_deprecated_apis: {
    stability: 'STABLE',
    help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
  },
  apiserver_watch_events_total: { stability: 'ALPHA', help: 'Number of events sent in watch clients' },
  apiserver_storage_objects: { stability: 'STABLE', help: 'Number of stored objects at the time of last check split by kind.' },
  etcd_request_duration_seconds: {
    stability: 'ALPHA',
    help: 'Etcd request latency in seconds for each operation and object type. (clusterd has no etcd: this measures its own store — LevelDB, and in a cluster the Raft round of a write.)',
  },
  // Upstream deprecated it in 1.23 in favour of apiserver_longrunning_requests{verb="WATCH"}
  // (and has since removed it); here it is hidden unless --show-hidden-metrics-for-version.
  apiserver_registered_watchers: { stability: 'ALPHA', deprecatedVersion: '1.23', help: 'Number of currently registered watchers for a given resources' },
} satisfies Record<string, Definition>;

export type MetricName = keyof typeof DEFINITIONS;

/** Store operations, as upstream's etcd3 store names them in etcd_request_duration_seconds. */
export type StoreOperation = 'get' | 'list' | 'create' | 'update' | 'delete';

export interface ServerMetricsOptions {
  /** The running release (SERVER_VERSION's major and minor): decides which metrics are hidden. */
  version: BinaryVersion;
  /** `--show-hidden-metrics-for-version`; anything but the previous minor release throws. */
  showHiddenMetricsForVersion?: string;
  /** Stored objects per resource (`pods`, `deployments.apps`), read at each scrape. */
  storedObjects: () => Iterable<{ resource: string; objects: number }>;
  /** The `type` label of a store key prefix (`/registry/<group>/<resource>/`), as `pods` or `deployments.apps`. */
  resourceOfPrefix: (prefix: string) => string;
  /** Told once about each deprecated metric that is still registered. */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

/** Label sets cached per kind of series; past this many a request resolves its labels each time. */
const MAX_CACHED_SERIES = 10_000;

/** A request's label set with its resolved children: what withMetrics holds for one request. */
export class RequestSeries {
  private readonly codes = new Map<number, CounterChild>();
  private longrunningChild: CounterChild | undefined;

  constructor(
    private readonly metrics: ServerMetrics,
    readonly labels: RequestLabels,
    private readonly latency: HistogramChild,
  ) {}

  /** Counts the answered request and records its latency. */
  done(code: number, seconds: number): void {
    let counter = this.codes.get(code);
    if (!counter) {
      counter = this.metrics.requestCounter({ ...this.labels, code: String(code) });
      this.codes.set(code, counter);
    }
    counter.value++;
    this.latency.observe(seconds);
  }

  /** The long-running gauge of this label set (its value is the number open now). */
  get longrunning(): CounterChild {
    return (this.longrunningChild ??= this.metrics.longrunningGauge(this.labels));
  }
}

/** What a watch stream reports: events delivered, and (when shown) the registered-watchers gauge. */
export interface WatchSeries {
  /** apiserver_watch_events_total of the watched kind: add the events handed to the stream. */
  readonly events: CounterChild;
  opened(): void;
  closed(): void;
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requests: CounterFamily;
  private readonly latency: HistogramFamily;
  private readonly inflight: Gauge<'request_kind'>;
  private readonly longrunning: GaugeFamily;
  private readonly deprecatedApis: Gauge<'group' | 'version' | 'resource' | 'subresource' | 'removed_release'>;
  private readonly watchEvents: CounterFamily;
  private readonly watchers: GaugeFamily;
  private readonly storeLatency: HistogramFamily;
  /** Names of the metrics this server registered (the others are hidden). */
  readonly shown: ReadonlySet<MetricName>;

  private readonly requestSeries = new Map<string, RequestSeries>();
  private readonly watchSeriesCache = new Map<string, WatchSeries>();
  private readonly storeSeries = new Map<string, HistogramChild>();
  /** Requests in flight now and the most at once since the last one-second tick, per kind. */
  private readonly inflightNow = { readOnly: 0, mutating: 0 };
  private readonly inflightPeak = { readOnly: 0, mutating: 0 };
  private readonly lastSecondPeak = { readOnly: 0, mutating: 0 };
  private readonly tick: NodeJS.Timeout;

  constructor(private readonly options: ServerMetricsOptions) {
    const showHidden = showHiddenMetrics(options.showHiddenMetricsForVersion, options.version);
    const shown = new Set<MetricName>();
    const registersFor = (name: MetricName): Registry[] => {
      const def: Definition = DEFINITIONS[name];
      if (isHiddenIn(def, options.version) && !showHidden) return [];
      if (def.deprecatedVersion) options.warn?.('metric is deprecated', { metric: name, deprecatedVersion: def.deprecatedVersion });
      shown.add(name);
      return [this.registry];
    };
    const meta = (name: MetricName) => ({ name, help: decoratedHelp(DEFINITIONS[name].help, DEFINITIONS[name]), registers: registersFor(name) });
    const family = <F>(make: new (name: string, help: string, labels: readonly string[], registers: Registry[]) => F, name: MetricName, labels: readonly string[]): F => {
      const m = meta(name);
      return new make(m.name, m.help, labels, m.registers);
    };
    const histogram = (name: MetricName, labels: readonly string[]): HistogramFamily => {
      const m = meta(name);
      return new HistogramFamily(m.name, m.help, labels, LATENCY_BUCKETS, m.registers);
    };

    collectDefaultMetrics({ register: this.registry });
    this.requests = family(CounterFamily, 'apiserver_request_total', [...REQUEST_LABELS, 'code']);
    this.latency = histogram('apiserver_request_duration_seconds', REQUEST_LABELS);
    const self = this;
    this.inflight = new Gauge({
      ...meta('apiserver_current_inflight_requests'),
      labelNames: ['request_kind'],
      collect() {
        // The peak of the last full second, or of this one so far when that is higher.
        for (const kind of ['readOnly', 'mutating'] as const) this.set({ request_kind: kind }, Math.max(self.lastSecondPeak[kind], self.inflightPeak[kind]));
      },
    });
    this.longrunning = family(GaugeFamily, 'apiserver_longrunning_requests', REQUEST_LABELS);
    this.deprecatedApis = new Gauge({ ...meta('apiserver_requested_deprecated_apis'), labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'] });
    this.watchEvents = family(CounterFamily, 'apiserver_watch_events_total', ['group', 'version', 'kind']);
    new Gauge({
      ...meta('apiserver_storage_objects'),
      labelNames: ['resource'],
      collect() {
        this.reset();
        for (const r of options.storedObjects()) this.set({ resource: r.resource }, r.objects);
      },
    });
    this.storeLatency = histogram('etcd_request_duration_seconds', ['operation', 'type']);
    this.watchers = family(GaugeFamily, 'apiserver_registered_watchers', ['group', 'version', 'kind']);
    this.shown = shown;

    this.tick = setInterval(() => {
      for (const kind of ['readOnly', 'mutating'] as const) {
        this.lastSecondPeak[kind] = this.inflightPeak[kind];
        this.inflightPeak[kind] = this.inflightNow[kind];
      }
    }, 1000);
    this.tick.unref();
  }

  /** The children of one request label set (cached: a request costs a key and a map lookup). */
  request(labels: RequestLabels): RequestSeries {
    const key = `${labels.verb}\0${labels.dry_run}\0${labels.group}\0${labels.version}\0${labels.resource}\0${labels.subresource}\0${labels.scope}\0${labels.component}`;
    let series = this.requestSeries.get(key);
    if (!series) {
      series = new RequestSeries(this, labels, this.latency.child(labels));
      if (this.requestSeries.size < MAX_CACHED_SERIES) this.requestSeries.set(key, series);
    }
    return series;
  }

  /** @internal for RequestSeries */
  requestCounter(labels: RequestLabels & { code: string }): CounterChild {
    return this.requests.child(labels);
  }

  /** @internal for RequestSeries */
  longrunningGauge(labels: RequestLabels): CounterChild {
    return this.longrunning.child(labels);
  }

  /** A non-long-running request started (readOnly: get, list; mutating: the rest). */
  inflightStarted(kind: 'readOnly' | 'mutating'): void {
    const now = ++this.inflightNow[kind];
    if (now > this.inflightPeak[kind]) this.inflightPeak[kind] = now;
  }

  inflightEnded(kind: 'readOnly' | 'mutating'): void {
    this.inflightNow[kind]--;
  }

  /** A request to a deprecated API version (spec §6 item 4): its gauge is 1 from then on. */
  deprecatedApiRequested(labels: { group: string; version: string; resource: string; subresource: string; removedRelease: string }): void {
    this.deprecatedApis.set({ group: labels.group, version: labels.version, resource: labels.resource, subresource: labels.subresource, removed_release: labels.removedRelease }, 1);
  }

  /** The series a watch stream of this kind reports to (cached per kind). */
  watch(group: string, version: string, kind: string): WatchSeries {
    const key = `${group}\0${version}\0${kind}`;
    let series = this.watchSeriesCache.get(key);
    if (!series) {
      const labels = { group, version, kind };
      const events = this.watchEvents.child(labels);
      const watchers = this.shown.has('apiserver_registered_watchers') ? this.watchers.child(labels) : undefined;
      series = {
        events,
        opened: () => {
          if (watchers) watchers.value++;
        },
        closed: () => {
          if (watchers) watchers.value--;
        },
      };
      if (this.watchSeriesCache.size < MAX_CACHED_SERIES) this.watchSeriesCache.set(key, series);
    }
    return series;
  }

  /**
   * Records one store request. `key` is the first key it touched; its resource prefix
   * (`/registry/<group>/<resource>/`) names the `type` label.
   */
  storeRequest(operation: StoreOperation, key: string, seconds: number): void {
    const end = key.indexOf('/', key.indexOf('/', key.indexOf('/', 1) + 1) + 1);
    const prefix = end < 0 ? key : key.slice(0, end + 1);
    const cacheKey = `${operation}\0${prefix}`;
    let child = this.storeSeries.get(cacheKey);
    if (!child) {
      child = this.storeLatency.child({ operation, type: this.options.resourceOfPrefix(prefix) });
      if (this.storeSeries.size < MAX_CACHED_SERIES) this.storeSeries.set(cacheKey, child);
    }
    child.observe(seconds);
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * One collection, made before the server serves (every collector registered by then). The
   * first collection of a process changes what V8 assumed about a shape hot code uses: prom-client
   * keeps a counter's value in a `{ value, labels }` object and adds to it at each collection,
   * and V8 gives every two-property object literal whose first property is `value` one shared
   * map, `{ value, done }` iterator results included (Node's streams, our iterators). Until some
   * object of that map has its `value` reassigned, V8 treats the field as constant; the first
   * reassignment deoptimizes every optimized function that relied on it. Measured on a server
   * taking creates: the first /metrics scrape deoptimized about 45 functions of the write path
   * (V8's "code dependencies"), which were then compiled again (about 2 s of compile CPU in
   * each replica of a three-replica cluster, bisected to the process CPU counter's first
   * increment); later scrapes deoptimized nothing. Made here, that change happens before
   * anything is optimized.
   */
  async prime(): Promise<void> {
    await this.registry.metrics();
  }

  close(): void {
    clearInterval(this.tick);
  }
}
