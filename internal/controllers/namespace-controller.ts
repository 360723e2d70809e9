// internal/controllers/namespace-controller owns finishing namespace deletion: when a
// namespace is terminating it deletes every namespaced object in it, of every stored kind
// (through the registries, so finalizers and graceful deletion are honoured), and once
// nothing is left it removes its finalizer (`kubernetes`, or the naming's word) through the finalize sub-resource,
// which lets the registry remove the namespace. It reacts to namespace watch events and
// retries on a timer while objects remain. Imports: registry, schema, watchcache, log.

import { isNotFound } from '../apierrors/status.js';
import type { Logger } from '../log/logger.js';
import { resourcePrefix } from '../registry/keys.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { ApiCatalog, ResourceInfo } from '../schema/catalog.js';
import type { WatchCache } from '../watchcache/watch-cache.js';
import type { CacheWatcher } from '../watchcache/watcher.js';

const CONTROLLER_USER = { name: 'system:serviceaccount:kube-system:namespace-controller', groups: ['system:masters', 'system:authenticated'] };

export class NamespaceController {
  private watcher: CacheWatcher | undefined;
  private readonly queue = new Set<string>();
  private running = false;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly namespaces: ResourceInfo;

  constructor(
    private readonly registries: RegistrySet,
    private readonly catalog: ApiCatalog,
    private readonly cache: WatchCache,
    private readonly log: Logger,
    /** The spec.finalizers entry this controller owns (`kubernetes`, or the naming's word). */
    private readonly finalizer: string,
    private readonly retryMs = 1000,
  ) {
    this.namespaces = catalog.resource('', 'v1', 'namespaces')!;
  }

  start(): void {
    // Started again after losing and regaining leadership: stop() must not outlive it.
    this.stopped = false;
    const prefix = resourcePrefix(this.namespaces);
    this.watcher = this.cache.watch({ prefix, filter: () => true, fromRevision: 0 });
    void (async () => {
      for await (const out of this.watcher!) {
        if (!('entry' in out) || out.type === 'DELETED') continue;
        const obj = JSON.parse(out.entry.bytes.toString('utf8')) as { metadata?: { deletionTimestamp?: string } };
        if (obj.metadata?.deletionTimestamp) this.enqueue(out.entry.name);
      }
      // The watch ends only when the cache stops or this controller is stopped, or if it fell
      // behind (overflow): then start again from the current state.
      if (!this.stopped) this.start();
    })();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.watcher?.close();
  }

  private enqueue(name: string): void {
    this.queue.add(name);
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const [name] = this.queue;
        this.queue.delete(name!);
        const done = await this.finalize(name!).catch((e: unknown) => {
          this.log.warn('namespace cleanup failed; retrying', { namespace: name, error: e instanceof Error ? e.message : String(e) });
          return false;
        });
        if (!done && !this.stopped) {
          clearTimeout(this.retry);
          this.retry = setTimeout(() => this.enqueue(name!), this.retryMs);
          this.retry.unref();
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Deletes what is left in the namespace; true once the namespace's finalizer is removed. */
  private async finalize(name: string): Promise<boolean> {
    const nsRegistry = this.registries.for(this.namespaces)!;
    const entry = await nsRegistry.getEntry('', name).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
    if (!entry) return true;
    const ns = JSON.parse(entry.bytes.toString('utf8')) as { metadata?: { deletionTimestamp?: string }; spec?: { finalizers?: string[] } };
    if (!ns.metadata?.deletionTimestamp) return true;
    let remaining = 0;
    for (const r of this.catalog.storedResources()) {
      if (!r.namespaced) continue;
      const registry = this.registries.for(r);
      if (!registry) continue;
      // Background, as upstream's namespace deleter asks: a kind whose default is to orphan
      // (core/v1 ReplicationControllers) must not wait for the garbage collector here.
      const ctx = { user: CONTROLLER_USER, manager: 'namespace-controller', namespace: name, dryRun: false, warnings: [] };
      const { items } = await registry.deleteCollection(r, ctx, { mode: { kind: 'consistent' }, namespace: name, filter: undefined, hasSelector: false, limit: 0 }, { dryRun: false, propagationPolicy: 'Background' });
      const left = await registry.list({ mode: { kind: 'consistent' }, namespace: name, filter: undefined, hasSelector: false, limit: 1 });
      remaining += left.entries.length;
      if (items.length) this.log.info('namespace cleanup deleted objects', { namespace: name, resource: r.resource, count: items.length });
    }
    if (remaining > 0) return false;
    const finalizers = ns.spec?.finalizers ?? [];
    if (!finalizers.includes(this.finalizer)) return true;
    await nsRegistry.update(
      this.namespaces,
      { user: CONTROLLER_USER, manager: 'namespace-controller', namespace: '', dryRun: false, warnings: [] },
      name,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, spec: { finalizers: finalizers.filter((f) => f !== this.finalizer) } },
      'finalize',
    );
    this.log.info('namespace finalized', { namespace: name });
    return true;
  }
}
