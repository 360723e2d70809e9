// internal/authz/rbac/reconcile-policy owns bringing the stored RBAC objects in line with the
// bootstrap policy at every start, as upstream's `rbac/bootstrap-roles` post-start hook does
// with its reconciliation mode: a missing object is created; an existing one whose autoupdate
// annotation is not "false" gets the policy's missing labels, annotations, rules (a rule the
// stored rules already cover is not added again) and subjects, and keeps everything it has
// beyond them. Aggregated roles keep their aggregationRule (missing selectors are added) and
// their rules are left to the aggregation controller. A binding whose roleRef differs is
// deleted and recreated (roleRef is immutable). Objects with autoupdate "false" are left alone.
// Writes go through the registry as the API server's own user, so they get the same
// validation and defaults as any client's; a conflict re-reads and tries again.
// Imports: bootstrap-policy, registry, schema, naming, apierrors, log, async/bounded.

import { isAlreadyExists, isConflict, isNotFound } from '../../apierrors/status.js';
import type { UserInfo } from '../../auth/user.js';
import type { Logger } from '../../log/logger.js';
import type { Naming } from '../../naming/naming.js';
import type { RegistrySet } from '../../registry/registry-set.js';
import type { ApiCatalog } from '../../schema/catalog.js';
import { settleBounded, STARTUP_WRITES_IN_FLIGHT } from '../../async/bounded.js';
import { bootstrapPolicy, policyKeys, type BindingObject, type PolicyRule, type RoleObject, type Subject } from './bootstrap-policy.js';

type Json = Record<string, unknown>;

export interface ReconcileDeps {
  registries: RegistrySet;
  catalog: ApiCatalog;
  naming: Naming;
  log: Logger;
  user: UserInfo;
}

export interface ReconcileCounts {
  created: number;
  updated: number;
  /** Objects with autoupdate "false". */
  skipped: number;
  unchanged: number;
}

const MAX_CONFLICT_RETRIES = 5;

/** Runs the whole policy once; throws on the first write that fails for another reason than a conflict. */
export async function reconcileBootstrapPolicy(deps: ReconcileDeps): Promise<ReconcileCounts> {
  const { naming } = deps;
  const policy = bootstrapPolicy(naming);
  const keys = policyKeys(naming);
  const counts: ReconcileCounts = { created: 0, updated: 0, skipped: 0, unchanged: 0 };
  const group = keys.rbacGroup;
  const kinds = {
    ClusterRole: deps.catalog.resource(group, 'v1', 'clusterroles'),
    Role: deps.catalog.resource(group, 'v1', 'roles'),
    ClusterRoleBinding: deps.catalog.resource(group, 'v1', 'clusterrolebindings'),
    RoleBinding: deps.catalog.resource(group, 'v1', 'rolebindings'),
  };
  // Roles first, then the bindings that refer to them: within each phase the objects are
  // independent and written a few at a time (settleBounded), so that a replica's start-up does
  // not wait for one replicated write after another.
  const phases: Array<Array<RoleObject | BindingObject>> = [
    [...policy.clusterRoles, ...policy.roles],
    [...policy.clusterRoleBindings, ...policy.roleBindings],
  ];
  // One consistent list per kind, not one consistent get per object: on a replica that does not
  // lead, every consistent read is a ReadIndex round trip to the leader plus a wait for this
  // replica's apply, and some 120 of them kept a replica restarted under load from becoming
  // ready for minutes. Only an object whose write conflicts is read again on its own.
  const listed = new Map<string, Json>();
  const unreadable = new Set<string>();
  for (const [kind, resource] of Object.entries(kinds)) {
    if (!resource) continue;
    const { entries } = await deps.registries.for(resource)!.list({ mode: { kind: 'consistent' }, namespace: '', filter: undefined, hasSelector: false, limit: 0 });
    for (const e of entries) {
      const key = listKey(kind, e.namespace, e.name);
      if (e.corrupt) unreadable.add(key);
      else listed.set(key, JSON.parse(e.bytes.toString('utf8')) as Json);
    }
  }
  const reconcileOne = async (expected: RoleObject | BindingObject): Promise<void> => {
    const resource = kinds[expected.kind];
    if (!resource) throw new Error(`${group}/v1 ${expected.kind} is not served`);
    const registry = deps.registries.for(resource)!;
    const namespace = expected.metadata.namespace ?? '';
    const ctx = { user: deps.user, manager: 'kube-apiserver', namespace, dryRun: false, warnings: [] as string[] };
    const what = { kind: expected.kind, name: expected.metadata.name, ...(namespace ? { namespace } : {}) };
    for (let attempt = 0; ; attempt++) {
      try {
        // The list's answer on the first attempt (absent from it: not stored); an unreadable
        // object is read on its own so that its error is reported as before, and so is every
        // object after a conflict.
        const key = listKey(expected.kind, namespace, expected.metadata.name);
        let existing: Json | undefined = attempt === 0 ? listed.get(key) : undefined;
        if (attempt > 0 || unreadable.has(key)) {
          try {
            existing = await registry.get(resource, namespace, expected.metadata.name, { kind: 'consistent' });
          } catch (e) {
            if (!isNotFound(e)) throw e;
          }
        }
        if (!existing) {
          await registry.create(resource, ctx, structuredClone(expected) as unknown as Json);
          counts.created++;
          deps.log.info('created bootstrap RBAC object', what);
          break;
        }
        const decision = reconcileObject(existing, expected, keys.autoupdate);
        if (decision.action === 'skip') counts.skipped++;
        else if (decision.action === 'none') counts.unchanged++;
        else if (decision.action === 'update') {
          await registry.update(resource, ctx, expected.metadata.name, decision.object);
          counts.updated++;
          deps.log.info('reconciled bootstrap RBAC object', what);
        } else if (decision.action === 'recreate') {
          // A binding to another role: roleRef cannot change, so the binding is replaced.
          await registry.delete(resource, ctx, expected.metadata.name, { dryRun: false, preconditions: { resourceVersion: resourceVersionOf(existing) } });
          await registry.create(resource, ctx, decision.object);
          counts.updated++;
          deps.log.info('recreated bootstrap RBAC binding with its policy roleRef', what);
        }
        break;
      } catch (e) {
        // Another replica (or client) wrote the object in between: read it again.
        if ((isConflict(e) || isAlreadyExists(e) || isNotFound(e)) && attempt < MAX_CONFLICT_RETRIES) continue;
        throw e;
      }
    }
  };
  for (const phase of phases) await settleBounded(phase, STARTUP_WRITES_IN_FLIGHT, reconcileOne);
  return counts;
}

function listKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

function resourceVersionOf(o: Json): string | undefined {
  const rv = (o.metadata as Json | undefined)?.resourceVersion;
  return typeof rv === 'string' ? rv : undefined;
}

export type ReconcileDecision =
  | { action: 'none' | 'skip' }
  | { action: 'update'; object: Json }
  | { action: 'recreate'; object: Json };

/**
 * What reconciling `existing` against `expected` needs. Pure: the registry write is the
 * caller's. Upstream's reconcile mode: add what is missing, never remove.
 */
export function reconcileObject(existing: Json, expected: RoleObject | BindingObject, autoupdateKey: string): ReconcileDecision {
  const meta = (existing.metadata ?? {}) as Json;
  const annotations = (meta.annotations ?? {}) as Record<string, string>;
  if (annotations[autoupdateKey] === 'false') return { action: 'skip' };
  const out = structuredClone(existing);
  const outMeta = out.metadata as Json;
  let changed = false;
  // Labels and annotations: the stored values win, missing ones are added.
  for (const field of ['labels', 'annotations'] as const) {
    const have = { ...((outMeta[field] ?? {}) as Record<string, string>) };
    for (const [k, v] of Object.entries(expected.metadata[field])) {
      if (!(k in have)) {
        have[k] = v;
        changed = true;
      }
    }
    outMeta[field] = have;
  }
  if (!isBinding(expected)) {
    if (expected.aggregationRule) {
      const rule = (out.aggregationRule ?? { clusterRoleSelectors: [] }) as { clusterRoleSelectors?: unknown[] };
      const selectors = [...(rule.clusterRoleSelectors ?? [])];
      for (const s of expected.aggregationRule.clusterRoleSelectors) {
        if (!selectors.some((have) => sameJson(have, s))) {
          selectors.push(structuredClone(s));
          changed = true;
        }
      }
      out.aggregationRule = { ...rule, clusterRoleSelectors: selectors };
      // Rules belong to the aggregation controller.
    } else {
      const rules = (Array.isArray(out.rules) ? out.rules : []) as PolicyRule[];
      const missing = expected.rules.filter((r) => !covers(rules, r));
      if (missing.length) {
        out.rules = [...rules, ...structuredClone(missing)];
        changed = true;
      }
    }
  } else {
    const roleRef = out.roleRef as Json | undefined;
    if (!roleRef || roleRef.name !== expected.roleRef.name || roleRef.kind !== expected.roleRef.kind || roleRef.apiGroup !== expected.roleRef.apiGroup) {
      const recreated = { ...structuredClone(expected), metadata: { ...outMeta } } as unknown as Json;
      const m = recreated.metadata as Json;
      for (const k of ['resourceVersion', 'uid', 'creationTimestamp', 'managedFields', 'generation']) delete m[k];
      recreated.subjects = unionSubjects((out.subjects ?? []) as Subject[], expected.subjects);
      return { action: 'recreate', object: recreated };
    }
    const subjects = (Array.isArray(out.subjects) ? out.subjects : []) as Subject[];
    const merged = unionSubjects(subjects, expected.subjects);
    if (merged.length !== subjects.length) {
      out.subjects = merged;
      changed = true;
    }
  }
  return changed ? { action: 'update', object: out } : { action: 'none' };
}

const isBinding = (o: RoleObject | BindingObject): o is BindingObject => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding';

function unionSubjects(have: Subject[], want: Subject[]): Subject[] {
  const key = (s: Subject): string => `${s.kind}\u0000${s.namespace ?? ''}\u0000${s.name}`;
  const seen = new Set(have.map(key));
  return [...have, ...want.filter((s) => !seen.has(key(s))).map((s) => structuredClone(s))];
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v as Json).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, canonical(x)]));
  return v;
}

const has = (list: readonly string[] | undefined, value: string): boolean => !!list && (list.includes('*') || list.includes(value));

/** True when every permission `rule` grants is granted by one of `rules` (upstream's Covers over broken-down rules). */
export function covers(rules: readonly PolicyRule[], rule: PolicyRule): boolean {
  if (rule.nonResourceURLs?.length) {
    return rule.verbs.every((verb) =>
      rule.nonResourceURLs!.every((url) =>
        rules.some((r) => has(r.verbs, verb) && (r.nonResourceURLs ?? []).some((p) => p === url || p === '*' || (p.endsWith('*') && url.startsWith(p.slice(0, -1))))),
      ),
    );
  }
  const names = rule.resourceNames?.length ? rule.resourceNames : [undefined];
  return rule.verbs.every((verb) =>
    (rule.apiGroups ?? []).every((group) =>
      (rule.resources ?? []).every((resource) =>
        names.every((name) =>
          rules.some(
            (r) =>
              has(r.verbs, verb) &&
              has(r.apiGroups, group) &&
              (has(r.resources, resource) || (r.resources ?? []).some((x) => x.startsWith('*/') && resource.includes('/') && resource.slice(resource.indexOf('/')) === x.slice(1))) &&
              (!r.resourceNames?.length || (name !== undefined && r.resourceNames.includes(name))),
          ),
        ),
      ),
    ),
  );
}
