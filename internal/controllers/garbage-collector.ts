// internal/controllers/garbage-collector owns cascading deletion (upstream's garbage collector
// of kube-controller-manager 1.32): leader-only, it follows every stored resource in the watch
// cache (built-ins, and custom resources as their definitions come and go) into the dependency
// graph, and works the graph's queue: dependents whose owners are all gone are deleted
// (background, or foreground when an owner waits for them in the foreground), references to
// gone owners are removed when a live owner remains, an owner deleted in the foreground loses
// its `foregroundDeletion` finalizer once no `blockOwnerDeletion` dependent is left, an owner
// deleted with orphaning has its references removed from its dependents and then loses its
// `orphan` finalizer. Every decision reads the objects involved consistently (never only the
// cache); every write goes through the registries, retried when it fails.
// Imports: apierrors, registry, schema, storedobject, watchcache, log, garbage-collector-graph.

import { randomBytes } from 'node:crypto';
import { isConflict, isNotFound } from '../apierrors/status.js';
import type { Logger } from '../log/logger.js';
import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN, type DeleteOptions } from '../registry/delete-options.js';
import type { GenericRegistry, RequestContext } from '../registry/generic-registry.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { ApiCatalog, ResourceInfo } from '../schema/catalog.js';
import { BytePattern } from '../storedobject/byte-pattern.js';
import type { JsonObject } from '../storedobject/stored-object.js';
import { entryMetadata } from '../watchcache/entry-object.js';
import type { CacheEntry } from '../watchcache/types.js';
import type { WatchCache } from '../watchcache/watch-cache.js';
import type { CacheWatcher } from '../watchcache/watcher.js';
import { DependencyGraph, deletingDependents, groupOf, nodeFromObject, type GraphChange, type GraphNode, type InvalidNamespaceRef, type OwnerRef, type WorkItem } from './garbage-collector-graph.js';

const COMPONENT = 'garbage-collector-controller';
const USER = { name: 'system:serviceaccount:kube-system:generic-garbage-collector', groups: ['system:masters', 'system:authenticated'] };
/** Owners confirmed absent, remembered so dependents of one gone owner need one read (upstream keeps 500). */
const ABSENT_CAPACITY = 500;
/** Workers by default: each waits mostly on the store (upstream runs 20). */
const WORKERS = 8;
/**
 * Stored objects observed per turn of the event loop when a resource is first followed: with
 * tens of thousands stored, observing them all at once held the event loop for seconds at
 * start (readiness probes and requests waited behind it).
 */
const OBSERVE_CHUNK = 1000;
const IGNORED = new Set(['/events', 'events.k8s.io/events']);
/** What a stored object holds when the graph cares about an update of it. */
const GRAPH_FIELDS = ['"ownerReferences"', '"finalizers"', '"deletionTimestamp"'];
/** The metadata members nodeFromObject reads. */
const GRAPH_MEMBERS = ['uid', 'name', 'namespace', 'ownerReferences', 'deletionTimestamp', 'finalizers'];
/** What the graph reads of an object whose bytes mention none of GRAPH_FIELDS (most objects). */
const IDENTITY_MEMBERS = ['uid', 'name', 'namespace'];
/** What finds an updated object's node. */
const UID_MEMBER = ['uid'];
/** GRAPH_FIELDS encoded once, searched from their rarest byte (see byte-pattern). */
const GRAPH_FIELD_PATTERNS = GRAPH_FIELDS.map((f) => new BytePattern(f));

/** Whether serving bytes may carry owners, finalizers or a deletion (else the graph needs only their identity). */
function mentionsGraphFields(bytes: Buffer): boolean {
  return GRAPH_FIELD_PATTERNS.some((f) => f.in(bytes));
}

/** An owner reference whose apiVersion/kind this server does not serve: retried (a definition may come). */
class RestMappingError extends Error {
  constructor(ref: OwnerRef) {
    super(`unable to get REST mapping for ${ref.apiVersion}/${ref.kind}.`);
  }
}

/** A cluster-scoped object naming an owner of a namespaced kind: wrong for good, not retried. */
class NamespacedOwnerOfClusterScopedError extends Error {
  constructor() {
    super('cluster-scoped objects cannot refer to namespaced owners');
  }
}

export interface GarbageCollectorOptions {
  /** Items worked on at once (upstream's --concurrent-gc-syncs, default 20). */
  workers?: number;
  /** First retry delay of a failed item (doubling up to maxRetryMs). */
  retryMs?: number;
  maxRetryMs?: number;
}

export class GarbageCollector {
  private readonly graph = new DependencyGraph();
  private readonly watchers = new Map<string, CacheWatcher>();
  private readonly queue = new Map<string, WorkItem>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  private readonly absent = new Set<string>();
  /** Invalid-namespace events already recorded (dependent uid/owner uid), once each. */
  private readonly reported = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  /** Workers running, and the keys they hold. */
  private busy = 0;
  private readonly inFlight = new Set<string>();
  private running = false;
  /** Between start() and stop(), even while waiting for the cache to be ready. */
  private wanted = false;
  /** Bumped on every start and stop: work of an earlier run stops at its next step. */
  private epoch = 0;

  constructor(
    private readonly registries: RegistrySet,
    private readonly catalog: ApiCatalog,
    private readonly cache: WatchCache,
    private readonly log: Logger,
    private readonly options: GarbageCollectorOptions = {},
  ) {}

  start(): void {
    if (this.running) return;
    this.wanted = true;
    if (!this.cache.ready) {
      // Stopped before the cache was ready: it stays stopped.
      setTimeout(() => this.wanted && this.start(), 100).unref();
      return;
    }
    this.running = true;
    this.epoch++;
    this.unsubscribe = this.catalog.onChange(() => this.followAll());
    this.followAll();
  }

  /** The runs of followAll, one after another (a catalog change may come during one). */
  private following: Promise<void> = Promise.resolve();

  stop(): void {
    this.wanted = false;
    this.running = false;
    this.epoch++;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.queue.clear();
    this.failures.clear();
    this.graph.clear();
    this.absent.clear();
  }

  // ---- following the resources ---------------------------------------------------------

  /**
   * Follows every stored resource not yet followed and stops following those no longer
   * stored: queued behind a run under way, and given up when the collector stops meanwhile.
   */
  private followAll(): void {
    const epoch = this.epoch;
    this.following = this.following
      .then(() => (this.running && epoch === this.epoch ? this.followAllNow(epoch) : undefined))
      .catch((e: unknown) => this.log.error('garbage collector: following the stored resources failed', { error: e instanceof Error ? e : String(e) }));
  }

  private async followAllNow(epoch: number): Promise<void> {
    const stored = new Map<string, GenericRegistry>();
    // Events are not followed (upstream's default GC-ignored resources): many, never owners.
    for (const reg of this.registries.all()) if (!IGNORED.has(reg.storage.storageResource)) stored.set(reg.prefix, reg);
    for (const [prefix, watcher] of this.watchers) {
      if (stored.has(prefix)) continue;
      watcher.close();
      this.watchers.delete(prefix);
    }
    // All current states first, then the work they imply, then the changes after them: owners
    // stored in any resource are in the graph before a dependent is judged by it.
    const fresh = [...stored.values()].filter((reg) => !this.watchers.has(reg.prefix));
    const changes: GraphChange[] = [];
    const consume: Array<() => void> = [];
    const held = this.graph.uidsUnder(new Set(fresh.map((reg) => reg.prefix)));
    for (const reg of fresh) {
      const followed = await this.follow(reg, held.get(reg.prefix) ?? [], epoch);
      if (!followed || epoch !== this.epoch) return;
      changes.push(...followed.changes);
      consume.push(followed.consume);
    }
    for (const c of changes) {
      // A dependent observed before its owner was queued to look for it: not needed once the
      // owner is in the graph.
      this.apply({ invalidNamespace: c.invalidNamespace, work: c.work.filter((w) => w.op !== 'delete' || this.graph.needsAttention(w.uid)) });
    }
    for (const start of consume) start();
  }

  /**
   * The resource's current state (each object observed, a chunk per turn of the event loop,
   * and those of `held`, the graph's nodes of it before, forgotten when no longer stored), and
   * a watch of its changes from that state's revision, consumed once `consume` is called.
   * Undefined when the collector stopped meanwhile.
   */
  private async follow(reg: GenericRegistry, held: readonly string[], epoch: number): Promise<{ changes: GraphChange[]; consume: () => void } | undefined> {
    const prefix = reg.prefix;
    const revision = this.cache.revision;
    const entries = this.cache.resource(prefix).list().entries;
    // Registered at the state's revision: what changes while the state is observed waits in it.
    const watcher = this.cache.watch({ prefix, filter: () => true, fromRevision: revision });
    this.watchers.set(prefix, watcher);
    const changes: GraphChange[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < entries.length; i++) {
      if (i > 0 && i % OBSERVE_CHUNK === 0) {
        await new Promise((r) => setImmediate(r));
        if (epoch !== this.epoch) return undefined;
      }
      const node = this.toNode(reg, entries[i]!);
      if (!node) continue;
      seen.add(node.uid);
      changes.push(this.graph.observe(node));
    }
    for (const uid of held) if (!seen.has(uid) && this.graph.get(uid)?.prefix === prefix) changes.push(this.forget(uid));
    const consume = async (): Promise<void> => {
      for await (const out of watcher) {
        // Events a closed watcher still hands over belong to a graph that is gone.
        if (epoch !== this.epoch) break;
        if (!('entry' in out)) continue;
        if (out.type === 'MODIFIED' && this.unchangedForGraph(out.entry)) continue;
        if (out.type === 'DELETED') {
          const node = this.toNode(reg, out.entry);
          if (node) this.apply(this.forget(node.uid));
        } else {
          const node = this.toNode(reg, out.entry);
          if (node) this.apply(this.graph.observe(node));
        }
      }
      // Ended by overflow or a cache restart while still wanted: follow again from the current state.
      if (this.running && epoch === this.epoch && this.watchers.get(prefix) === watcher) {
        this.watchers.delete(prefix);
        this.log.info('garbage collector: following again after its watch ended', { prefix });
        this.followAll();
      }
    };
    return { changes, consume: () => void consume() };
  }

  private toNode(reg: GenericRegistry, entry: CacheEntry): GraphNode | undefined {
    // The graph reads a few metadata members: at start every stored object passes here, and
    // reading just those costs a fraction of a parse; an object without owners, finalizers or
    // deletion is read only as far as its identity (usually before its managedFields). Shared
    // (read-only): nodeFromObject copies what it keeps.
    const metadata = entryMetadata(entry, mentionsGraphFields(entry.bytes) ? GRAPH_MEMBERS : IDENTITY_MEMBERS);
    if (!metadata) return undefined;
    const r = reg.storage;
    const node = nodeFromObject({ metadata }, { prefix: reg.prefix, key: entry.key, group: r.group, kind: r.kind, namespaced: r.namespaced });
    if (node) {
      // The entry's strings (the cache holds them anyway), not copies parsed from its bytes: the
      // graph keeps a node per stored object (with 50,000 pods, about 60 B each).
      if (node.name === entry.name) node.name = entry.name;
      if (node.namespace === entry.namespace) node.namespace = entry.namespace;
    }
    return node;
  }

  /**
   * An update of an object the graph holds with no owners, finalizers or deletion, whose new
   * bytes mention none of them: nothing for the graph, and no parse of every write's object
   * (its uid is read from the bytes: a map from key to uid cost about 50 B per stored object).
   */
  private unchangedForGraph(entry: CacheEntry): boolean {
    if (mentionsGraphFields(entry.bytes)) return false;
    const uid = entryMetadata(entry, UID_MEMBER)?.uid;
    return typeof uid === 'string' && this.graph.isPlain(uid);
  }

  private forget(uid: string): GraphChange {
    const change = this.graph.forget(uid);
    // Its dependents will ask for it: it is known to be gone.
    if (change.work.length) this.rememberAbsent(uid);
    return change;
  }

  private rememberAbsent(uid: string): void {
    if (this.absent.size >= ABSENT_CAPACITY) this.absent.delete(this.absent.values().next().value!);
    this.absent.add(uid);
  }

  private apply(change: GraphChange): void {
    for (const ref of change.invalidNamespace) void this.reportInvalidNamespace(ref);
    for (const item of change.work) this.enqueue(item);
  }

  // ---- the queue -----------------------------------------------------------------------

  private enqueue(item: WorkItem): void {
    if (!this.running) return;
    const key = `${item.op}/${item.uid}`;
    this.queue.set(key, item);
    this.pump();
  }

  private retryLater(key: string, item: WorkItem): void {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    const base = this.options.retryMs ?? 200;
    const delay = Math.min(base * 2 ** (n - 1), this.options.maxRetryMs ?? 30_000);
    clearTimeout(this.timers.get(key));
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.enqueue(item);
    }, delay);
    t.unref();
    this.timers.set(key, t);
  }

  /** Starts workers while there is work no worker holds, up to the pool's size. */
  private pump(): void {
    while (this.running && this.busy < (this.options.workers ?? WORKERS) && this.nextItem() !== undefined) {
      this.busy++;
      void this.work(this.epoch).finally(() => {
        this.busy--;
        this.pump();
      });
    }
  }

  /** The first queued item whose key no worker is processing (one key is never worked on twice at once). */
  private nextItem(): [string, WorkItem] | undefined {
    for (const entry of this.queue) if (!this.inFlight.has(entry[0])) return entry;
    return undefined;
  }

  private async work(epoch: number): Promise<void> {
    for (let next = this.nextItem(); next && this.running && epoch === this.epoch; next = this.nextItem()) {
      const [key, item] = next;
      this.queue.delete(key);
      this.inFlight.add(key);
      try {
        if (item.op === 'delete') await this.attemptToDelete(item.uid);
        else await this.attemptToOrphan(item.uid);
        this.failures.delete(key);
      } catch (e) {
        if (e instanceof NamespacedOwnerOfClusterScopedError) {
          this.log.info('garbage collector: ' + e.message, { uid: item.uid });
          this.failures.delete(key);
          continue;
        }
        const level = e instanceof RestMappingError || isConflict(e) ? 'info' : 'warn';
        this.log[level]('garbage collector: item failed; retrying', { op: item.op, uid: item.uid, error: e instanceof Error ? e.message : String(e) });
        if (this.running && epoch === this.epoch) this.retryLater(key, item);
      } finally {
        this.inFlight.delete(key);
      }
    }
  }


  // ---- reads and writes ----------------------------------------------------------------

  private ctx(namespace: string): RequestContext {
    return { user: USER, manager: COMPONENT, namespace, dryRun: false, warnings: [] };
  }

  private registryOf(node: GraphNode): GenericRegistry | undefined {
    return [...this.registries.all()].find((r) => r.prefix === node.prefix);
  }

  /** The object as stored now (a consistent read), or undefined when gone or replaced. */
  private async latest(reg: GenericRegistry, namespace: string, name: string, uid: string): Promise<JsonObject | undefined> {
    try {
      const obj = await reg.get(reg.storage, namespace, name, { kind: 'consistent' });
      return (obj.metadata as JsonObject | undefined)?.uid === uid ? obj : undefined;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Read-modify-write of one object by uid; a concurrent change is read again (a few times). */
  private async modify(reg: GenericRegistry, namespace: string, name: string, uid: string, change: (obj: JsonObject) => boolean): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const obj = await this.latest(reg, namespace, name, uid);
      if (!obj || !change(obj)) return;
      try {
        await reg.update(reg.storage, this.ctx(namespace), name, obj);
        return;
      } catch (e) {
        if (isNotFound(e)) return;
        if (!isConflict(e) || attempt >= 4) throw e;
      }
    }
  }

  private async deleteObject(reg: GenericRegistry, node: GraphNode, policy: NonNullable<DeleteOptions['propagationPolicy']>): Promise<void> {
    this.log.info('garbage collector: deleting object', { resource: reg.storage.resource, namespace: node.namespace || undefined, name: node.name, uid: node.uid, propagationPolicy: policy });
    try {
      await reg.delete(reg.storage, this.ctx(node.namespace), node.name, { dryRun: false, propagationPolicy: policy, preconditions: { uid: node.uid } });
    } catch (e) {
      // Gone already, or replaced by another object of that name (the uid precondition).
      if (isNotFound(e) || isConflict(e)) return;
      throw e;
    }
  }

  private async removeFinalizer(reg: GenericRegistry, node: GraphNode, finalizer: string): Promise<void> {
    await this.modify(reg, node.namespace, node.name, node.uid, (obj) => {
      const meta = obj.metadata as JsonObject;
      const list = Array.isArray(meta.finalizers) ? (meta.finalizers as unknown[]) : [];
      if (!list.includes(finalizer)) return false;
      meta.finalizers = list.filter((f) => f !== finalizer);
      return true;
    });
  }

  /** Drops the references to the owners `uids` from the object. */
  private async removeOwnerRefs(reg: GenericRegistry, node: GraphNode, uids: ReadonlySet<string>): Promise<void> {
    await this.modify(reg, node.namespace, node.name, node.uid, (obj) => {
      const meta = obj.metadata as JsonObject;
      const refs = Array.isArray(meta.ownerReferences) ? (meta.ownerReferences as JsonObject[]) : [];
      const kept = refs.filter((r) => !uids.has(String(r.uid)));
      if (kept.length === refs.length) return false;
      if (kept.length) meta.ownerReferences = kept;
      else delete meta.ownerReferences;
      return true;
    });
  }

  // ---- decisions -----------------------------------------------------------------------

  /** The owner's resource for a reference: exactly its group, version and kind. */
  private ownerResource(ref: OwnerRef): ResourceInfo {
    const slash = ref.apiVersion.indexOf('/');
    const version = slash < 0 ? ref.apiVersion : ref.apiVersion.slice(slash + 1);
    const r = version ? this.catalog.resourceForKind(groupOf(ref.apiVersion), version, ref.kind) : undefined;
    if (!r) throw new RestMappingError(ref);
    return r;
  }

  /** Whether an owner reference of `node` names an object that is gone, waits for its dependents, or is there. */
  private async classify(node: GraphNode, ref: OwnerRef): Promise<'dangling' | 'waiting' | 'solid'> {
    const r = this.ownerResource(ref);
    if (!node.namespace && r.namespaced) throw new NamespacedOwnerOfClusterScopedError();
    if (this.absent.has(ref.uid)) return 'dangling';
    const reg = this.registries.for(r);
    if (!reg) throw new RestMappingError(ref);
    // An owner is looked for in the dependent's namespace: one elsewhere is not its owner.
    let owner: JsonObject;
    try {
      // Read as stored: only its metadata counts, and no version conversion (a CRD's webhook)
      // should stand between the collector and an answer.
      owner = await reg.get(reg.storage, r.namespaced ? node.namespace : '', ref.name, { kind: 'consistent' });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      this.rememberAbsent(ref.uid);
      return 'dangling';
    }
    const meta = (owner.metadata ?? {}) as JsonObject;
    if (meta.uid !== ref.uid) {
      this.rememberAbsent(ref.uid);
      return 'dangling';
    }
    const finalizers = Array.isArray(meta.finalizers) ? (meta.finalizers as unknown[]) : [];
    return meta.deletionTimestamp !== undefined && finalizers.includes(FINALIZER_FOREGROUND) ? 'waiting' : 'solid';
  }

  /** Upstream's attemptToDeleteItem. */
  private async attemptToDelete(uid: string): Promise<void> {
    const node = this.graph.get(uid);
    if (!node) return;
    const reg = this.registryOf(node);
    if (!reg) return;
    const latest = await this.latest(reg, node.namespace, node.name, uid);
    // Gone or replaced: its deletion event will tell the graph.
    if (!latest) return;
    const current = nodeFromObject(latest, node) ?? node;
    if (current.deleting && !deletingDependents(current)) return; // another actor finishes it
    if (deletingDependents(current)) return this.finishForeground(reg, current);
    if (current.owners.length === 0) return;

    const solid: OwnerRef[] = [];
    const dangling: OwnerRef[] = [];
    const waiting: OwnerRef[] = [];
    for (const ref of current.owners) {
      const kind = await this.classify(current, ref);
      (kind === 'solid' ? solid : kind === 'dangling' ? dangling : waiting).push(ref);
    }
    if (solid.length > 0) {
      // A live owner keeps it: only the references to gone (or foreground-deleted) owners go.
      if (dangling.length === 0 && waiting.length === 0) return;
      this.log.info('garbage collector: removing references to owners that are gone or waiting', { name: current.name, namespace: current.namespace || undefined, uid });
      return this.removeOwnerRefs(reg, current, new Set([...dangling, ...waiting].map((r) => r.uid)));
    }
    if (waiting.length > 0 && this.graph.dependentsOf(uid).length > 0) {
      // An owner waits for it, and it has dependents of its own: it goes in the foreground
      // too. A dependent already waiting on its own dependents could wait on it in a cycle:
      // its references stop blocking first.
      if (this.graph.dependentsOf(uid).some(deletingDependents)) {
        await this.modify(reg, current.namespace, current.name, uid, (obj) => {
          const refs = ((obj.metadata as JsonObject).ownerReferences ?? []) as JsonObject[];
          let changed = false;
          for (const r of refs) {
            if (r.blockOwnerDeletion === true) {
              r.blockOwnerDeletion = false;
              changed = true;
            }
          }
          return changed;
        });
      }
      return this.deleteObject(reg, current, 'Foreground');
    }
    // No owner is left: it is deleted, honouring a collector finalizer it already has.
    const policy = current.finalizers.includes(FINALIZER_ORPHAN) ? 'Orphan' : current.finalizers.includes(FINALIZER_FOREGROUND) ? 'Foreground' : 'Background';
    return this.deleteObject(reg, current, policy);
  }

  /** An owner deleted in the foreground: done once no dependent blocks it, else its blocking dependents are deleted. */
  private async finishForeground(reg: GenericRegistry, owner: GraphNode): Promise<void> {
    const blocking = this.graph.dependentsOf(owner.uid).filter((d) => d.owners.some((o) => o.uid === owner.uid && o.blockOwnerDeletion === true));
    if (blocking.length === 0) {
      this.log.info('garbage collector: no blocking dependents left; removing the foregroundDeletion finalizer', { name: owner.name, namespace: owner.namespace || undefined, uid: owner.uid });
      return this.removeFinalizer(reg, owner, FINALIZER_FOREGROUND);
    }
    // Each blocking dependent is looked at (deleted, or its reference removed); their deletion
    // events bring the owner back here.
    for (const dep of blocking) if (!deletingDependents(dep)) this.enqueue({ op: 'delete', uid: dep.uid });
  }

  /** Upstream's attemptToOrphan: the owner's references leave its dependents, then its `orphan` finalizer goes. */
  private async attemptToOrphan(uid: string): Promise<void> {
    const node = this.graph.get(uid);
    if (!node) return;
    const reg = this.registryOf(node);
    if (!reg) return;
    const latest = await this.latest(reg, node.namespace, node.name, uid);
    if (!latest) return;
    const current = nodeFromObject(latest, node) ?? node;
    if (!current.deleting || !current.finalizers.includes(FINALIZER_ORPHAN)) return;
    const owner = new Set([uid]);
    const dependents = this.graph.dependentsOf(uid);
    const batch = this.options.workers ?? WORKERS;
    for (let i = 0; i < dependents.length; i += batch) {
      await Promise.all(
        dependents.slice(i, i + batch).map(async (dep) => {
          const depReg = this.registryOf(dep);
          if (depReg) await this.removeOwnerRefs(depReg, dep, owner);
        }),
      );
    }
    this.log.info('garbage collector: dependents orphaned; removing the orphan finalizer', { name: current.name, namespace: current.namespace || undefined, uid });
    await this.removeFinalizer(reg, current, FINALIZER_ORPHAN);
  }

  // ---- events --------------------------------------------------------------------------

  /** A Warning event on the dependent, as upstream's graph builder records it (once per reference). */
  private async reportInvalidNamespace({ dependent, owner }: InvalidNamespaceRef): Promise<void> {
    const key = `${dependent.uid}/${owner.uid}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    if (this.reported.size > 10_000) this.reported.delete(this.reported.values().next().value!);
    const events = this.catalog.resource('', 'v1', 'events');
    const reg = events && this.registries.for(events);
    const depResource = this.registryOf(dependent)?.storage;
    if (!events || !reg || !depResource) return;
    const namespace = dependent.namespace || 'default';
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const identity = `[${owner.apiVersion}/${owner.kind}, namespace: ${dependent.namespace}, name: ${owner.name}, uid: ${owner.uid}]`;
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${dependent.name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: { kind: dependent.kind, apiVersion: depResource.apiVersion, name: dependent.name, uid: dependent.uid, ...(dependent.namespace ? { namespace: dependent.namespace } : {}) },
      reason: 'OwnerRefInvalidNamespace',
      message: `ownerRef ${identity} does not exist in namespace "${dependent.namespace}"`,
      type: 'Warning',
      source: { component: COMPONENT },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: COMPONENT,
      reportingInstance: '',
    };
    this.log.info('garbage collector: owner reference names an owner in another namespace', { dependent: dependent.name, namespace: dependent.namespace || undefined, owner: owner.name, ownerUid: owner.uid });
    try {
      await reg.create(events, this.ctx(namespace), event);
    } catch (e) {
      this.log.warn('garbage collector: recording an event failed', { error: e instanceof Error ? e.message : String(e) });
    }
  }
}
