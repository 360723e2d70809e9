// internal/authz/node/graph owns the Node authorizer's view of which objects each node may
// reach, as upstream 1.32's node graph: a pod bound to a node (spec.nodeName) reaches its
// secrets, configmaps, claims (named and ephemeral), service account and resource claims; a
// PersistentVolume whose claimRef is such a claim is reachable, and so are the kubelet-side
// secrets it names; a VolumeAttachment or ResourceSlice reaches the node in its spec.nodeName.
// Each object's contribution is counted per node, so an update or delete removes exactly the
// edges it added and a question is a few map lookups (no store read, no scan per request).
// followCache keeps it current from the watch cache. Imports: references, watchcache, log.

import type { Logger } from '../../log/logger.js';
import { decodedEntry } from '../../watchcache/entry-object.js';
import type { CacheEntry } from '../../watchcache/types.js';
import type { WatchCache } from '../../watchcache/watch-cache.js';
import type { CacheWatcher } from '../../watchcache/watcher.js';
import { podReferences, pvReferences, type PodReferences, type PvReferences } from './references.js';

/** What the node authorizer asks about (upstream's vertex types). */
export type VertexKind = 'pod' | 'secret' | 'configmap' | 'pvc' | 'pv' | 'serviceaccount' | 'resourceclaim' | 'volumeattachment' | 'resourceslice';

/** Kinds reached through pods, keyed `<namespace>/<name>`. */
type PodReached = 'pod' | 'secret' | 'configmap' | 'pvc' | 'serviceaccount' | 'resourceclaim';
/** Cluster-scoped objects naming their node in spec.nodeName. */
type NodeNamed = 'volumeattachment' | 'resourceslice';

type Json = Record<string, unknown>;

/** object key → node → number of edges from that object to the node. */
class EdgeCounts {
  private readonly byObject = new Map<string, Map<string, number>>();

  add(object: string, node: string, delta: 1 | -1): void {
    let nodes = this.byObject.get(object);
    if (!nodes) {
      if (delta < 0) return;
      nodes = new Map();
      this.byObject.set(object, nodes);
    }
    const n = (nodes.get(node) ?? 0) + delta;
    if (n > 0) nodes.set(node, n);
    else nodes.delete(node);
    if (nodes.size === 0) this.byObject.delete(object);
  }

  has(object: string, node: string): boolean {
    return this.byObject.get(object)?.has(node) === true;
  }

  clear(): void {
    this.byObject.clear();
  }

  get size(): number {
    return this.byObject.size;
  }
}

export class NodeGraph {
  private readonly pods = new Map<string, PodReferences>();
  private readonly viaPods = new Map<PodReached, EdgeCounts>(
    (['pod', 'secret', 'configmap', 'pvc', 'serviceaccount', 'resourceclaim'] as const).map((k) => [k, new EdgeCounts()]),
  );
  private readonly pvs = new Map<string, PvReferences>();
  /** secret key → names of bound PVs that hand it to their kubelet. */
  private readonly pvsBySecret = new Map<string, Set<string>>();
  private readonly nodeNamed = new Map<NodeNamed, Map<string, string>>([
    ['volumeattachment', new Map()],
    ['resourceslice', new Map()],
  ]);

  /** Adds or replaces a pod (decoded JSON); an unbound pod contributes nothing. */
  setPod(pod: Json): void {
    const refs = podReferences(pod);
    const key = `${refs.namespace}/${refs.name}`;
    this.deletePod(key);
    if (!refs.nodeName) return;
    this.pods.set(key, refs);
    this.countPod(refs, 1);
  }

  deletePod(key: string): void {
    const old = this.pods.get(key);
    if (!old) return;
    this.pods.delete(key);
    this.countPod(old, -1);
  }

  /** The pod as the graph holds it, when bound to a node (NodeRestriction asks for token binding). */
  pod(namespace: string, name: string): Readonly<PodReferences> | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }

  private countPod(refs: PodReferences, delta: 1 | -1): void {
    const ns = refs.namespace;
    const node = refs.nodeName;
    const count = (kind: PodReached, names: readonly string[]): void => {
      const edges = this.viaPods.get(kind)!;
      for (const n of names) edges.add(`${ns}/${n}`, node, delta);
    };
    count('pod', [refs.name]);
    count('secret', refs.secrets);
    count('configmap', refs.configMaps);
    count('pvc', refs.claims);
    count('resourceclaim', refs.resourceClaims);
    if (refs.serviceAccount) count('serviceaccount', [refs.serviceAccount]);
  }

  setPv(pv: Json): void {
    const refs = pvReferences(pv);
    this.deletePv(refs.name);
    // Upstream adds no edge for a volume without a claim: nothing can reach it or its secrets.
    if (!refs.claim) return;
    this.pvs.set(refs.name, refs);
    for (const s of refs.secrets) {
      let names = this.pvsBySecret.get(s);
      if (!names) this.pvsBySecret.set(s, (names = new Set()));
      names.add(refs.name);
    }
  }

  deletePv(name: string): void {
    const old = this.pvs.get(name);
    if (!old) return;
    this.pvs.delete(name);
    for (const s of old.secrets) {
      const names = this.pvsBySecret.get(s);
      names?.delete(name);
      if (names?.size === 0) this.pvsBySecret.delete(s);
    }
  }

  setNodeNamed(kind: NodeNamed, obj: Json): void {
    const name = String((obj.metadata as Json | undefined)?.name ?? '');
    const node = (obj.spec as Json | undefined)?.nodeName;
    const byName = this.nodeNamed.get(kind)!;
    if (typeof node === 'string' && node) byName.set(name, node);
    else byName.delete(name);
  }

  deleteNodeNamed(kind: NodeNamed, name: string): void {
    this.nodeNamed.get(kind)!.delete(name);
  }

  /** Forgets every object of one source (before the source is listed again). */
  clear(source: 'pods' | 'pvs' | NodeNamed): void {
    if (source === 'pods') {
      this.pods.clear();
      for (const edges of this.viaPods.values()) edges.clear();
    } else if (source === 'pvs') {
      this.pvs.clear();
      this.pvsBySecret.clear();
    } else {
      this.nodeNamed.get(source)!.clear();
    }
  }

  /** Whether `node` may reach the object (`namespace` is '' for cluster-scoped kinds). */
  reaches(node: string, kind: VertexKind, namespace: string, name: string): boolean {
    switch (kind) {
      case 'pv':
        return this.pvReaches(node, name);
      case 'volumeattachment':
      case 'resourceslice':
        return this.nodeNamed.get(kind)!.get(name) === node;
      case 'secret': {
        const key = `${namespace}/${name}`;
        if (this.viaPods.get('secret')!.has(key, node)) return true;
        for (const pv of this.pvsBySecret.get(key) ?? []) if (this.pvReaches(node, pv)) return true;
        return false;
      }
      default:
        return this.viaPods.get(kind)!.has(`${namespace}/${name}`, node);
    }
  }

  private pvReaches(node: string, name: string): boolean {
    const pv = this.pvs.get(name);
    return pv !== undefined && this.viaPods.get('pvc')!.has(pv.claim, node);
  }

  /** Sizes, for logs and tests. */
  stats(): { pods: number; pvs: number; secrets: number } {
    return { pods: this.pods.size, pvs: this.pvs.size, secrets: this.viaPods.get('secret')!.size };
  }
}

/** Upstream storage prefixes (keys do not depend on --naming). */
const SOURCES: ReadonlyArray<{ prefix: string; source: 'pods' | 'pvs' | NodeNamed }> = [
  { prefix: '/registry/core/pods/', source: 'pods' },
  { prefix: '/registry/core/persistentvolumes/', source: 'pvs' },
  { prefix: '/registry/storage.k8s.io/volumeattachments/', source: 'volumeattachment' },
  { prefix: '/registry/resource.k8s.io/resourceslices/', source: 'resourceslice' },
];

export interface GraphFollower {
  /**
   * True once every source has been listed. As an informer's HasSynced it stays true while a
   * source relists: the graph keeps what it knew until the fresh list replaces it.
   */
  synced(): boolean;
  stop(): void;
}

/**
 * Keeps `graph` current from the cache: each source is listed and then watched from that
 * revision, in one synchronous step so no change falls between; its events are applied in
 * callback mode. A watcher closed by overflow, an error or a cache reload is followed again
 * from a fresh list once the cache is ready, as an informer relists.
 */
export function followCache(graph: NodeGraph, cache: WatchCache, log: Logger): GraphFollower {
  const watchers = new Map<string, CacheWatcher>();
  const unsynced = new Set<string>(SOURCES.map((s) => s.prefix));
  let stopped = false;

  // Shared with the write's other consumers (read-only): the graph copies what it keeps.
  const decode = (entry: CacheEntry): Json | undefined => decodedEntry(entry) as Json | undefined;
  const apply = (source: (typeof SOURCES)[number]['source'], type: string, entry: CacheEntry): void => {
    if (source === 'pods') {
      // An unbound pod contributes nothing (setPod would only drop what it held): the cache's
      // spec.nodeName field says so without decoding the pod, which spares a parse of every
      // pod created before the scheduler binds it.
      const obj = type === 'DELETED' || entry.fields['spec.nodeName'] === '' ? undefined : decode(entry);
      if (obj) graph.setPod(obj);
      else graph.deletePod(`${entry.namespace}/${entry.name}`);
      return;
    }
    const obj = type === 'DELETED' ? undefined : decode(entry);
    if (source === 'pvs') {
      if (obj) graph.setPv(obj);
      else graph.deletePv(entry.name);
    } else if (obj) graph.setNodeNamed(source, obj);
    else graph.deleteNodeNamed(source, entry.name);
  };

  const follow = ({ prefix, source }: (typeof SOURCES)[number]): void => {
    if (stopped) return;
    if (!cache.ready) {
      setTimeout(() => follow({ prefix, source }), 100).unref();
      return;
    }
    const revision = cache.revision;
    const entries = revision > 0 ? cache.resource(prefix).list().entries : [];
    const watcher = cache.watch({ prefix, filter: () => true, fromRevision: revision });
    watchers.set(prefix, watcher);
    graph.clear(source);
    for (const entry of entries) apply(source, 'ADDED', entry);
    unsynced.delete(prefix);
    watcher.consume(() => {
      for (const out of watcher.drain()) if ('entry' in out) apply(source, out.type, out.entry);
      if (watcher.closed && !stopped) {
        watchers.delete(prefix);
        log.info('node authorizer: relisting after its watch ended', { prefix, reason: watcher.closed });
        setTimeout(() => follow({ prefix, source }), 0).unref();
      }
    });
  };
  for (const s of SOURCES) follow(s);
  return {
    synced: () => unsynced.size === 0,
    stop: () => {
      stopped = true;
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
