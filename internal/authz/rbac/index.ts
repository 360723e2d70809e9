// internal/authz/rbac/index owns this replica's view of RBAC objects: Roles, ClusterRoles,
// RoleBindings and ClusterRoleBindings followed from the watch cache (never a store read per
// request), with bindings indexed by subject (user name, group name; a ServiceAccount subject is
// the user `system:serviceaccount:<ns>:<name>`) and scope (cluster, or the binding's namespace),
// so a request visits only the bindings that name its user or one of its groups. Roles are
// looked up by reference at request time, so a role's change applies without rebinding and a
// binding to a missing role grants nothing. It visits rules in upstream's order (cluster role
// bindings, then role bindings of the namespace; by name within each, for the same answer on
// every replica).
// Imports: auth/user, naming, registry/keys, watchcache, log, rules.

import type { UserInfo } from '../../auth/user.js';
import type { Logger } from '../../log/logger.js';
import type { Naming } from '../../naming/naming.js';
import { resourcePrefix } from '../../registry/keys.js';
import type { CacheEntry } from '../../watchcache/types.js';
import type { WatchCache } from '../../watchcache/watch-cache.js';
import type { CacheWatcher } from '../../watchcache/watcher.js';
import { goQuote, toPolicyRule, type PolicyRule } from './rules.js';

export const RBAC_UPSTREAM_GROUP = 'rbac.authorization.k8s.io';
export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';

export interface Subject {
  kind: string;
  name: string;
  namespace: string;
}

export interface Binding {
  kind: 'ClusterRoleBinding' | 'RoleBinding';
  /** '' for a ClusterRoleBinding. */
  namespace: string;
  name: string;
  roleRef: { kind: string; name: string };
  subjects: Subject[];
  /** Descriptions by subject, made on first use. */
  described?: Map<Subject, string>;
}

type Obj = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function parseEntry(e: CacheEntry): Obj | undefined {
  if (e.corrupt) return undefined;
  try {
    const o = JSON.parse(e.bytes.toString('utf8')) as unknown;
    return typeof o === 'object' && o !== null ? (o as Obj) : undefined;
  } catch {
    return undefined;
  }
}

function toBinding(kind: Binding['kind'], e: CacheEntry, o: Obj): Binding {
  const ref = (o.roleRef ?? {}) as Obj;
  const subjects = Array.isArray(o.subjects) ? (o.subjects as unknown[]) : [];
  return {
    kind,
    namespace: kind === 'RoleBinding' ? e.namespace : '',
    name: e.name,
    roleRef: { kind: str(ref.kind), name: str(ref.name) },
    subjects: subjects
      .filter((s): s is Obj => typeof s === 'object' && s !== null)
      .map((s) => ({ kind: str(s.kind), name: str(s.name), namespace: str(s.namespace) })),
  };
}

/** The user name a ServiceAccount subject stands for, or undefined when it names no namespace. */
function subjectKey(s: Subject, bindingNamespace: string): string | undefined {
  switch (s.kind) {
    case 'User':
      return `u:${s.name}`;
    case 'Group':
      return `g:${s.name}`;
    case 'ServiceAccount': {
      // A RoleBinding's subject without a namespace means the binding's own, as upstream.
      const ns = s.namespace || bindingNamespace;
      return ns ? `u:${SERVICE_ACCOUNT_USER_PREFIX}${ns}:${s.name}` : undefined;
    }
    default:
      return undefined;
  }
}

/** Upstream's appliesTo for one subject. */
export function subjectApplies(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  const key = subjectKey(s, bindingNamespace);
  if (key === undefined) return false;
  return key.startsWith('u:') ? key.slice(2) === user.name : user.groups.includes(key.slice(2));
}

/** Upstream's describeSubject: `User "u"`, `ServiceAccount "name/ns"`. */
export function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${goQuote(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${goQuote(s.name)}`;
}

/** Upstream's source descriptions in the allow reason. */
export function describeBinding(b: Binding, subject: Subject): string {
  const name = b.kind === 'RoleBinding' ? `${b.name}/${b.namespace}` : b.name;
  return `${b.kind} ${goQuote(name)} of ${b.roleRef.kind} ${goQuote(b.roleRef.name)} to ${describeSubject(subject, b.namespace)}`;
}

/** One resource followed from the cache: initial state, then changes; re-followed when its watch ends. */
class Follower {
  private watcher: CacheWatcher | undefined;
  private stopped = false;
  primed = false;

  constructor(
    private readonly cache: WatchCache,
    private readonly prefix: string,
    private readonly apply: (type: 'set' | 'delete', e: CacheEntry) => void,
    /** Called with the keys present after a (re)start: everything else is gone. */
    private readonly resync: (present: Set<string>) => void,
    private readonly onPrimed: () => void,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.stopped) return;
    // The state now, read synchronously (so the index is complete before the first request: the
    // cache is primed before the server serves), then the changes after it. Not a watch from 0:
    // its initial events count against the watcher's queue bound, which 10,000 bindings pass.
    const revision = this.cache.revision;
    const present = new Set<string>();
    for (const entry of this.cache.resource(this.prefix).list().entries) {
      present.add(entry.key);
      this.apply('set', entry);
    }
    this.resync(present);
    const w = this.cache.watch({ prefix: this.prefix, filter: () => true, fromRevision: revision });
    this.watcher = w;
    if (!this.primed) {
      this.primed = true;
      this.onPrimed();
    }
    w.consume(() => {
      this.sync();
      if (w.closed && w.pending === 0 && this.watcher === w) this.restart();
    });
  }

  /** Applies what the cache has handed the watch and the delivery round has not yet. */
  sync(): void {
    const w = this.watcher;
    if (!w) return;
    for (const out of w.drain()) {
      if ('entry' in out) this.apply(out.type === 'DELETED' ? 'delete' : 'set', out.entry);
    }
  }

  /**
   * The watch ended (overflow, or the cache reloading after a snapshot): keep answering from
   * what is known, as upstream's informers do while they list again, and follow anew once the
   * cache serves again.
   */
  private restart(): void {
    this.watcher = undefined;
    if (this.stopped) return;
    this.log.info('rbac: following again', { prefix: this.prefix });
    const again = (): void => {
      if (this.stopped) return;
      if (this.cache.ready) this.start();
      else setTimeout(again, 100).unref();
    };
    again();
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = undefined;
  }
}

/** What a visit reports per rule; return false to stop. */
export type RuleVisitor = (source: () => string, rule: PolicyRule) => boolean;

/** How long the index waits for the cache's load before it asks again (a reload can outlast one wait). */
const CACHE_LOAD_WAIT_MS = 60_000;

export class RbacIndex {
  private readonly roles = new Map<string, PolicyRule[]>();
  private readonly clusterRoles = new Map<string, PolicyRule[]>();
  /** Cache key → binding, to undo its index entries on change. */
  private readonly bindings = new Map<string, Binding>();
  /** Names of the ClusterRoleBindings held (the bootstrap defaults stand in for missing ones). */
  private readonly clusterBindingNames = new Map<string, number>();
  /** Subject key → scope ('' = cluster, else namespace) → bindings. */
  private readonly bySubject = new Map<string, Map<string, Set<Binding>>>();
  private readonly followers: Follower[] = [];
  private primedCount = 0;
  private readonly readyWaiters: Array<() => void> = [];
  /** Set by stop(): a start still waiting for the cache's load then starts nothing. */
  private halted = false;
  private readonly rbacGroup: string;
  /**
   * Counts changes to what the index holds (roles, bindings, a resync): an answer computed at
   * an older generation may be stale.
   */
  generation = 0;

  constructor(
    private readonly cache: WatchCache,
    naming: Naming,
    private readonly log: Logger,
  ) {
    this.rbacGroup = naming.group(RBAC_UPSTREAM_GROUP);
    const prefix = (resource: string) => resourcePrefix({ upstreamGroup: RBAC_UPSTREAM_GROUP, resource });
    this.follow(prefix('roles'), (e) => `${e.namespace}/${e.name}`, this.roles);
    this.follow(prefix('clusterroles'), (e) => e.name, this.clusterRoles);
    this.followBindings(prefix('rolebindings'), 'RoleBinding');
    this.followBindings(prefix('clusterrolebindings'), 'ClusterRoleBinding');
  }

  /**
   * Starts following; the index is ready at once when the cache is, else the moment the cache
   * has loaded. (A 50 ms poll used to start it: at start-up the poll came due while the
   * bootstrap and the controllers' first passes held the loop, so the index was built only
   * after them, and the first requests it authorizes, /readyz's among them, waited for both.)
   */
  start(): void {
    if (this.cache.ready) {
      for (const f of this.followers) f.start();
      return;
    }
    const again = (): void => {
      if (!this.halted) this.start();
    };
    this.cache.waitForRevision(0, CACHE_LOAD_WAIT_MS).then(again, again);
  }

  stop(): void {
    this.halted = true;
    for (const f of this.followers) f.stop();
  }

  /**
   * Takes now every change the cache has applied (they otherwise reach the index in the next
   * delivery round): after the cache reached a revision, the index answers as of it.
   */
  sync(): void {
    for (const f of this.followers) f.sync();
  }

  get ready(): boolean {
    return this.primedCount === this.followers.length;
  }

  whenReady(): Promise<void> {
    return this.ready ? Promise.resolve() : new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  private primed = (): void => {
    this.primedCount++;
    if (this.ready) for (const w of this.readyWaiters.splice(0)) w();
  };

  /** Follows `prefix`; every change it applies moves the generation on. */
  private addFollower(prefix: string, apply: (type: 'set' | 'delete', e: CacheEntry) => void, resync: (present: Set<string>) => void): void {
    this.followers.push(
      new Follower(
        this.cache,
        prefix,
        (type, e) => {
          this.generation++;
          apply(type, e);
        },
        (present) => {
          this.generation++;
          resync(present);
        },
        this.primed,
        this.log,
      ),
    );
  }

  private follow(prefix: string, keyOf: (e: CacheEntry) => string, into: Map<string, PolicyRule[]>): void {
    const byCacheKey = new Map<string, string>();
    this.addFollower(
      prefix,
      (type, e) => {
        const o = type === 'set' ? parseEntry(e) : undefined;
        if (!o) {
          into.delete(keyOf(e));
          byCacheKey.delete(e.key);
          return;
        }
        into.set(keyOf(e), Array.isArray(o.rules) ? (o.rules as unknown[]).map(toPolicyRule) : []);
        byCacheKey.set(e.key, keyOf(e));
      },
      (present) => {
        for (const [k, name] of byCacheKey) {
          if (present.has(k)) continue;
          byCacheKey.delete(k);
          into.delete(name);
        }
      },
    );
  }

  private followBindings(prefix: string, kind: Binding['kind']): void {
    this.addFollower(
      prefix,
      (type, e) => {
        this.unindex(e.key);
        const o = type === 'set' ? parseEntry(e) : undefined;
        if (o) this.indexBinding(e.key, toBinding(kind, e, o));
      },
      (present) => {
        for (const k of [...this.bindings.keys()]) if (k.startsWith(prefix) && !present.has(k)) this.unindex(k);
      },
    );
  }

  /** Whether a ClusterRoleBinding of this name is held. */
  hasClusterRoleBinding(name: string): boolean {
    return this.clusterBindingNames.has(name);
  }

  private indexBinding(cacheKey: string, b: Binding): void {
    this.bindings.set(cacheKey, b);
    if (b.kind === 'ClusterRoleBinding') this.clusterBindingNames.set(b.name, (this.clusterBindingNames.get(b.name) ?? 0) + 1);
    for (const s of b.subjects) {
      const key = subjectKey(s, b.namespace);
      if (key === undefined) continue;
      let scopes = this.bySubject.get(key);
      if (!scopes) this.bySubject.set(key, (scopes = new Map()));
      let set = scopes.get(b.namespace);
      if (!set) scopes.set(b.namespace, (set = new Set()));
      set.add(b);
    }
  }

  private unindex(cacheKey: string): void {
    const b = this.bindings.get(cacheKey);
    if (!b) return;
    this.bindings.delete(cacheKey);
    if (b.kind === 'ClusterRoleBinding') {
      const n = (this.clusterBindingNames.get(b.name) ?? 1) - 1;
      if (n > 0) this.clusterBindingNames.set(b.name, n);
      else this.clusterBindingNames.delete(b.name);
    }
    for (const s of b.subjects) {
      const key = subjectKey(s, b.namespace);
      const scopes = key === undefined ? undefined : this.bySubject.get(key);
      const set = scopes?.get(b.namespace);
      if (!set) continue;
      set.delete(b);
      if (set.size === 0) scopes!.delete(b.namespace);
      if (scopes!.size === 0) this.bySubject.delete(key!);
    }
  }

  /** Bindings at `scope` ('' = cluster) naming the user or one of its groups, by name. */
  bindingsFor(user: UserInfo, scope: string): Binding[] {
    const found: Binding[] = [];
    const add = (key: string): void => {
      const set = this.bySubject.get(key)?.get(scope);
      if (set) for (const b of set) if (!found.includes(b)) found.push(b);
    };
    add(`u:${user.name}`);
    for (const g of user.groups) add(`g:${g}`);
    if (found.length > 1) found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return found;
  }

  /** The rules a role reference names, or upstream's not-found error text. */
  roleRules(ref: { kind: string; name: string }, bindingNamespace: string): PolicyRule[] | string {
    if (ref.kind === 'ClusterRole') {
      return this.clusterRoles.get(ref.name) ?? `clusterrole.${this.rbacGroup} ${goQuote(ref.name)} not found`;
    }
    if (ref.kind === 'Role') {
      return (bindingNamespace ? this.roles.get(`${bindingNamespace}/${ref.name}`) : undefined) ?? `role.${this.rbacGroup} ${goQuote(ref.name)} not found`;
    }
    return `unsupported role reference kind: ${goQuote(ref.kind)}`;
  }

  /**
   * Visits every rule granted to `user` at cluster scope and, for a namespace, in it (upstream's
   * VisitRulesFor). Returns the errors met (missing roles); a visit the visitor stops ends early.
   */
  visit(user: UserInfo, namespace: string, visitor: RuleVisitor): string[] {
    const errors: string[] = [];
    const scopes = namespace ? ['', namespace] : [''];
    for (const scope of scopes) {
      for (const b of this.bindingsFor(user, scope)) {
        const subject = b.subjects.find((s) => subjectApplies(user, s, b.namespace));
        if (!subject) continue;
        const rules = this.roleRules(b.roleRef, b.namespace);
        if (typeof rules === 'string') {
          errors.push(rules);
          continue;
        }
        const source = (): string => {
          // Kept with the binding (replaced on any change): an allow costs no string building.
          const known = b.described?.get(subject);
          if (known !== undefined) return known;
          const text = describeBinding(b, subject);
          (b.described ??= new Map()).set(subject, text);
          return text;
        };
        for (const r of rules) if (!visitor(source, r)) return errors;
      }
    }
    return errors;
  }

  /** Every rule granted to `user` at cluster scope and in `namespace`, with the errors met. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors = this.visit(user, namespace, (_s, r) => {
      rules.push(r);
      return true;
    });
    return { rules, errors };
  }

  /** Cluster roles by name (for the aggregation controller's tests and diagnostics). */
  clusterRole(name: string): PolicyRule[] | undefined {
    return this.clusterRoles.get(name);
  }
}
