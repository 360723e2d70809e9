// internal/controllers/garbage-collector-graph owns the garbage collector's picture of
// ownership: one node per observed object (by uid) with its owner references and deletion
// state, the dependents of every owner uid (also of owners never observed), and what each
// change means for the collector's queue (upstream's GraphBuilder.processGraphChanges): which
// dependents to look at, which owners to re-check, when orphaning or foreground deletion
// starts, and which references name an owner observed in another namespace. A node with no
// owners, finalizers or deletion (most stored objects) is held as its key alone and expanded
// when asked for. It does no I/O.
// Imports: registry/delete-options (finalizer names).

import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN } from '../registry/delete-options.js';

export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** An observed object, as the collector needs it. */
export interface GraphNode {
  uid: string;
  /** The watch-cache prefix of its resource (which registry holds it), and its key there. */
  prefix: string;
  key: string;
  /** Served group and kind of its resource, namespaced or not. */
  group: string;
  kind: string;
  namespaced: boolean;
  namespace: string;
  name: string;
  owners: readonly OwnerRef[];
  deleting: boolean;
  finalizers: readonly string[];
}

/**
 * What a node without owners or finalizers (most objects) holds: one shared empty list, not
 * two arrays of its own per stored object.
 */
const NONE: readonly never[] = Object.freeze([]);

/** Work for the collector's queue. */
export type WorkItem = { op: 'delete'; uid: string } | { op: 'orphan'; uid: string };

/** A reference to an owner observed in a namespace the dependent cannot refer to. */
export interface InvalidNamespaceRef {
  dependent: GraphNode;
  owner: OwnerRef;
}

export interface GraphChange {
  work: WorkItem[];
  invalidNamespace: InvalidNamespaceRef[];
}

export const deletingDependents = (n: Pick<GraphNode, 'deleting' | 'finalizers'>): boolean => n.deleting && n.finalizers.includes(FINALIZER_FOREGROUND);
const orphaning = (n: Pick<GraphNode, 'deleting' | 'finalizers'>): boolean => n.deleting && n.finalizers.includes(FINALIZER_ORPHAN);

/** The group of an apiVersion (`apps/v1` → apps, `v1` → ''). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** Reads a stored object's fields the graph keeps; undefined without a uid. */
export function nodeFromObject(obj: Record<string, unknown>, at: { prefix: string; key: string; group: string; kind: string; namespaced: boolean }): GraphNode | undefined {
  const meta = (obj.metadata ?? {}) as Record<string, unknown>;
  if (typeof meta.uid !== 'string' || meta.uid === '') return undefined;
  const owners: OwnerRef[] = [];
  if (Array.isArray(meta.ownerReferences)) {
    for (const r of meta.ownerReferences as Array<Record<string, unknown>>) {
      if (!r || typeof r.uid !== 'string' || typeof r.kind !== 'string' || typeof r.name !== 'string' || typeof r.apiVersion !== 'string') continue;
      const ref: OwnerRef = { apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid };
      if (typeof r.controller === 'boolean') ref.controller = r.controller;
      if (typeof r.blockOwnerDeletion === 'boolean') ref.blockOwnerDeletion = r.blockOwnerDeletion;
      owners.push(ref);
    }
  }
  return {
    uid: meta.uid,
    prefix: at.prefix,
    key: at.key,
    group: at.group,
    kind: at.kind,
    namespaced: at.namespaced,
    namespace: typeof meta.namespace === 'string' ? meta.namespace : '',
    name: typeof meta.name === 'string' ? meta.name : '',
    owners: owners.length > 0 ? owners : NONE,
    deleting: meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null,
    finalizers: Array.isArray(meta.finalizers) && meta.finalizers.length > 0 ? (meta.finalizers as unknown[]).filter((f): f is string => typeof f === 'string') : NONE,
  };
}

function isPlain(n: GraphNode): boolean {
  return n.owners.length === 0 && n.finalizers.length === 0 && !n.deleting;
}

/** Whether `ref` names `owner` as observed: same uid and group, kind and name. */
function matches(ref: OwnerRef, owner: GraphNode): boolean {
  return ref.uid === owner.uid && ref.name === owner.name && ref.kind === owner.kind && groupOf(ref.apiVersion) === owner.group;
}

/** What a plain node's resource contributes to it (see DependencyGraph.nodes). */
type NodeResource = Pick<GraphNode, 'prefix' | 'group' | 'kind' | 'namespaced'>;

export class DependencyGraph {
  /**
   * Nodes by uid. A plain node (no owners, finalizers or deletion: what most stored objects
   * are) is held as its key, which the watch cache holds anyway, and its resource's prefix
   * plus namespace and name give the rest: a node object of its own cost about 110 B per
   * stored object, and it is asked for only when an object names it as an owner.
   */
  private readonly nodes = new Map<string, GraphNode | string>();
  /** The resources of the nodes observed, by prefix (a plain node's key finds its own). */
  private readonly resources = new Map<string, NodeResource>();
  /** Owner uid → uids of the nodes that name it (the owner may never have been observed). */
  private readonly dependents = new Map<string, Set<string>>();

  get size(): number {
    return this.nodes.size;
  }

  get(uid: string): GraphNode | undefined {
    const held = this.nodes.get(uid);
    return typeof held === 'string' ? this.expand(uid, held) : held;
  }

  /** Whether the graph holds `uid` with no owners, finalizers or deletion. */
  isPlain(uid: string): boolean {
    const held = this.nodes.get(uid);
    return typeof held === 'string' || (held !== undefined && isPlain(held));
  }

  /** The resource of a plain node's key: cluster-scoped `<prefix><name>` or namespaced `<prefix><ns>/<name>`. */
  private resourceOf(key: string): NodeResource | undefined {
    const last = key.lastIndexOf('/');
    const direct = this.resources.get(key.slice(0, last + 1));
    if (direct && !direct.namespaced) return direct;
    const scoped = this.resources.get(key.slice(0, key.lastIndexOf('/', last - 1) + 1));
    return scoped?.namespaced ? scoped : undefined;
  }

  private expand(uid: string, key: string): GraphNode | undefined {
    const r = this.resourceOf(key);
    if (!r) return undefined;
    const last = key.lastIndexOf('/');
    const namespace = r.namespaced ? key.slice(r.prefix.length, last) : '';
    return { uid, prefix: r.prefix, key, group: r.group, kind: r.kind, namespaced: r.namespaced, namespace, name: key.slice(last + 1), owners: NONE, deleting: false, finalizers: NONE };
  }

  /** What the graph holds for `node`: its key when the key alone gives it back (see nodes). */
  private held(node: GraphNode): GraphNode | string {
    if (!isPlain(node)) return node;
    const known = this.resources.get(node.prefix);
    if (!known) this.resources.set(node.prefix, { prefix: node.prefix, group: node.group, kind: node.kind, namespaced: node.namespaced });
    else if (known.group !== node.group || known.kind !== node.kind || known.namespaced !== node.namespaced) return node;
    const key = node.namespaced ? `${node.prefix}${node.namespace}/${node.name}` : `${node.prefix}${node.name}`;
    // A name or namespace with a slash, or one that is not what the key says, keeps its node.
    return key === node.key && !node.name.includes('/') && !node.namespace.includes('/') ? node.key : node;
  }

  /** The observed objects that name `uid` as an owner. */
  dependentsOf(uid: string): GraphNode[] {
    const out: GraphNode[] = [];
    for (const d of this.dependents.get(uid) ?? []) {
      const n = this.get(d);
      if (n) out.push(n);
    }
    return out;
  }

  /**
   * The nodes of each of `prefixes` (to find those a relist no longer holds), in one pass over
   * the graph: at start every resource is followed at once, and a pass per resource went over
   * every stored object some sixty times.
   */
  uidsUnder(prefixes: ReadonlySet<string>): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const [uid, n] of this.nodes) {
      const prefix = typeof n === 'string' ? this.resourceOf(n)?.prefix : n.prefix;
      if (prefix === undefined || !prefixes.has(prefix)) continue;
      const list = out.get(prefix);
      if (list) list.push(uid);
      else out.set(prefix, [uid]);
    }
    return out;
  }

  /** An object was added or changed. */
  observe(node: GraphNode): GraphChange {
    const work: WorkItem[] = [];
    const invalidNamespace: InvalidNamespaceRef[] = [];
    const prev = this.get(node.uid);
    this.nodes.set(node.uid, this.held(node));

    const before = new Map((prev?.owners ?? []).map((o) => [o.uid, o]));
    const after = new Map(node.owners.map((o) => [o.uid, o]));
    let verify = false;
    for (const [uid, ref] of after) {
      const old = before.get(uid);
      if (!old) {
        this.link(uid, node.uid);
        const owner = this.get(uid);
        if (!owner) verify = true; // never observed: the worker asks the store whether it exists
        else if (owner.namespaced && owner.namespace !== node.namespace) {
          invalidNamespace.push({ dependent: node, owner: ref });
          verify = true;
        } else if (!matches(ref, owner)) verify = true;
      } else if (old.blockOwnerDeletion === true && ref.blockOwnerDeletion !== true) {
        // No longer blocks: an owner waiting for its blocking dependents looks again.
        const owner = this.get(uid);
        if (owner && deletingDependents(owner)) work.push({ op: 'delete', uid });
      }
    }
    for (const uid of before.keys()) {
      if (after.has(uid)) continue;
      this.unlink(uid, node.uid);
      const owner = this.get(uid);
      if (owner && deletingDependents(owner)) work.push({ op: 'delete', uid });
    }
    if (verify) work.push({ op: 'delete', uid: node.uid });

    if (!prev) {
      // Dependents seen before this owner: those naming it from another namespace are wrong.
      for (const dep of this.dependentsOf(node.uid)) {
        if (node.namespaced && dep.namespace !== node.namespace) {
          const ref = dep.owners.find((o) => o.uid === node.uid);
          if (ref) invalidNamespace.push({ dependent: dep, owner: ref });
          work.push({ op: 'delete', uid: dep.uid });
        } else if (!dep.owners.some((o) => matches(o, node))) work.push({ op: 'delete', uid: dep.uid });
      }
    }
    if (orphaning(node) && !(prev && orphaning(prev))) work.push({ op: 'orphan', uid: node.uid });
    if (deletingDependents(node) && !(prev && deletingDependents(prev))) {
      for (const dep of this.dependentsOf(node.uid)) work.push({ op: 'delete', uid: dep.uid });
      work.push({ op: 'delete', uid: node.uid });
    }
    return { work, invalidNamespace };
  }

  /** An object is gone: its dependents are looked at, and owners waiting for it look again. */
  forget(uid: string): GraphChange {
    const work: WorkItem[] = [];
    const node = this.get(uid);
    if (!node) return { work, invalidNamespace: [] };
    this.nodes.delete(uid);
    for (const ref of node.owners) {
      this.unlink(ref.uid, uid);
      const owner = this.get(ref.uid);
      if (owner && deletingDependents(owner)) work.push({ op: 'delete', uid: ref.uid });
    }
    for (const dep of this.dependentsOf(uid)) work.push({ op: 'delete', uid: dep.uid });
    return { work, invalidNamespace: [] };
  }

  /**
   * Whether the collector has anything to check about a node: it is being deleted, or an owner
   * is not observed, is observed elsewhere or under other coordinates, or waits for its
   * dependents. False for the settled majority when the graph is first built.
   */
  needsAttention(uid: string): boolean {
    const node = this.nodes.get(uid);
    if (node === undefined || typeof node === 'string') return false;
    if (node.deleting) return true;
    return node.owners.some((ref) => {
      const owner = this.get(ref.uid);
      return !owner || owner.deleting || (owner.namespaced && owner.namespace !== node.namespace) || !matches(ref, owner);
    });
  }

  clear(): void {
    this.nodes.clear();
    this.resources.clear();
    this.dependents.clear();
  }

  private link(owner: string, dependent: string): void {
    let set = this.dependents.get(owner);
    if (!set) this.dependents.set(owner, (set = new Set()));
    set.add(dependent);
  }

  private unlink(owner: string, dependent: string): void {
    const set = this.dependents.get(owner);
    if (!set) return;
    set.delete(dependent);
    if (set.size === 0) this.dependents.delete(owner);
  }
}
