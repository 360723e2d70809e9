// internal/aggregator/extension-docs owns what this replica knows of each available
// extension's API: its `/apis/<group>/<version>` resource list (for merged discovery) and its
// OpenAPI v2 document and v3 document for the group/version (for merged OpenAPI). Every
// replica fetches them itself (discovery is served everywhere), when an APIService changes or
// becomes available and every 30 s; a failed fetch keeps the last document, marked stale.
// Imports: controllers/reconciler, aggregator (apiservices, client).

import { Reconciler } from '../controllers/reconciler.js';
import type { Logger } from '../log/logger.js';
import type { WatchCache } from '../watchcache/watch-cache.js';
import type { ApiServices, ApiServiceView } from './apiservices.js';
import type { ExtensionClient } from './extension-client.js';

const REFRESH_MS = 30_000;

type Json = Record<string, unknown>;

export interface ExtensionDoc {
  readonly apiService: string;
  readonly group: string;
  readonly version: string;
  readonly groupPriorityMinimum: number;
  readonly versionPriority: number;
  /** The extension's APIResourceList resources. */
  readonly resources: readonly Json[];
  /** Whether the last fetch failed (the resources are the last ones fetched). */
  readonly stale: boolean;
  readonly openapiV2: Json | undefined;
  readonly openapiV3: Json | undefined;
}

async function fetchJson(client: ExtensionClient, api: ApiServiceView, path: string): Promise<Json | undefined> {
  const res = await client.get(api, path);
  if (res.status !== 200) return undefined;
  const parsed = JSON.parse(res.body.toString('utf8')) as unknown;
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Json) : undefined;
}

export class ExtensionDocs {
  private readonly docs = new Map<string, ExtensionDoc>();
  /** Bumped on every change: merged documents are rebuilt when it moves. */
  generation = 0;
  private readonly reconciler: Reconciler;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly apis: ApiServices,
    private readonly client: ExtensionClient,
    cache: WatchCache,
    private readonly log: Logger,
  ) {
    this.reconciler = new Reconciler({ name: 'aggregator-discovery', sources: [{ prefix: apis.prefix, keys: (_t, e) => [e.name] }], reconcile: (name) => this.refresh(name) }, cache, log);
  }

  start(): void {
    this.reconciler.start();
  }

  stop(): void {
    this.reconciler.stop();
  }

  /** Calls `listener` after every change of the documents. */
  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  all(): ExtensionDoc[] {
    return [...this.docs.values()];
  }

  private set(name: string, doc: ExtensionDoc | undefined): void {
    if (doc) this.docs.set(name, doc);
    else if (!this.docs.delete(name)) return;
    this.generation++;
    for (const l of this.listeners) l();
  }

  private async refresh(name: string): Promise<number | void> {
    const api = this.apis.byName(name);
    if (!api || !api.service) return this.set(name, undefined);
    const old = this.docs.get(name);
    const base = { apiService: name, group: api.group, version: api.version, groupPriorityMinimum: api.groupPriorityMinimum, versionPriority: api.versionPriority };
    if (api.available !== 'True') {
      // Upstream keeps serving the last discovery of an unavailable service, marked stale.
      if (old) this.set(name, { ...old, ...base, stale: true });
      return REFRESH_MS;
    }
    try {
      const list = await fetchJson(this.client, api, `/apis/${api.group}/${api.version}`);
      if (!list) throw new Error('no APIResourceList');
      const resources = Array.isArray(list.resources) ? (list.resources as Json[]) : [];
      const openapiV2 = await fetchJson(this.client, api, '/openapi/v2').catch(() => undefined);
      const openapiV3 = await fetchJson(this.client, api, `/openapi/v3/apis/${api.group}/${api.version}`).catch(() => undefined);
      const doc: ExtensionDoc = { ...base, resources, stale: false, openapiV2, openapiV3 };
      if (!old || JSON.stringify(old) !== JSON.stringify(doc)) this.set(name, doc);
    } catch (e) {
      this.log.info('aggregator: fetching discovery failed', { apiService: name, error: e instanceof Error ? e.message : String(e) });
      if (old && !old.stale) this.set(name, { ...old, ...base, stale: true });
    }
    return REFRESH_MS;
  }
}
