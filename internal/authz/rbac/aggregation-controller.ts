// internal/authz/rbac/aggregation-controller owns the ClusterRole aggregation controller
// (upstream's clusterrole-aggregation, leader-only): a ClusterRole with an aggregationRule gets
// as rules the union of the rules of every other ClusterRole one of its selectors matches
// (selectors in order, the matches of each sorted by name, duplicates dropped), so a label on a
// ClusterRole adds its rules to the aggregate and removing it takes them away. Any ClusterRole
// change looks at every aggregated one. Writes go through the registry as a system user; a
// conflict is retried by the reconciler.
// Imports: controllers (reconciler, env), selectors, registry/keys, watchcache, index.

import type { ControllerEnv } from '../../controllers/serviceaccount-controllers.js';
import { Reconciler } from '../../controllers/reconciler.js';
import { resourcePrefix } from '../../registry/keys.js';
import { labelSelectorFromMeta, type LabelSelector } from '../../selectors/label-selector.js';
import type { CacheEntry } from '../../watchcache/types.js';
import { RBAC_UPSTREAM_GROUP } from './index.js';

type Obj = Record<string, unknown>;
const MANAGER = 'clusterrole-aggregation-controller';

const parse = (e: CacheEntry): Obj | undefined => {
  if (e.corrupt) return undefined;
  try {
    return JSON.parse(e.bytes.toString('utf8')) as Obj;
  } catch {
    return undefined;
  }
};

/** A rule in a canonical text, for deduplication and comparison (nil and empty lists alike). */
function ruleKey(r: unknown): string {
  const o = (typeof r === 'object' && r !== null ? r : {}) as Record<string, unknown>;
  const list = (k: string) => (Array.isArray(o[k]) ? (o[k] as unknown[]) : []);
  return JSON.stringify(['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'].map(list));
}

/** Turns label-selector objects into selectors; one that does not parse stops the sync, as upstream. */
function selectorsOf(role: Obj): LabelSelector[] | string {
  const rule = (role.aggregationRule ?? {}) as { clusterRoleSelectors?: unknown };
  const out: LabelSelector[] = [];
  for (const s of Array.isArray(rule.clusterRoleSelectors) ? rule.clusterRoleSelectors : []) {
    const parsed = labelSelectorFromMeta(s ?? {}, 'aggregationRule.clusterRoleSelectors');
    if (!parsed.ok) return parsed.errors.map((e) => e.detail ?? String(e.type)).join('; ');
    out.push(parsed.selector);
  }
  return out;
}

export function clusterRoleAggregationController(env: ControllerEnv): Reconciler {
  const r = env.catalog.resource(env.naming.group(RBAC_UPSTREAM_GROUP), 'v1', 'clusterroles')!;
  const prefix = resourcePrefix({ upstreamGroup: RBAC_UPSTREAM_GROUP, resource: 'clusterroles' });
  const entries = () => env.cache.resource(prefix).list().entries;
  const aggregated = (e: CacheEntry) => !e.corrupt && e.bytes.includes('"aggregationRule"');
  const aggregatedNames = new Set<string>();
  const ctx = () => ({ user: { name: `system:serviceaccount:kube-system:${MANAGER}`, groups: ['system:masters', 'system:authenticated'] }, manager: MANAGER, namespace: '', dryRun: false, warnings: [] as string[] });

  return new Reconciler(
    {
      name: MANAGER,
      sources: [
        {
          prefix,
          // Any change can alter what a selector matches: look at every aggregated role (kept
          // as a set, so an event costs the number of aggregated roles, not of all roles).
          keys: (t, e) => {
            if (t !== 'DELETED' && aggregated(e)) aggregatedNames.add(e.name);
            else aggregatedNames.delete(e.name);
            return [...aggregatedNames];
          },
        },
      ],
      async reconcile(name) {
        const entry = env.cache.resource(prefix).get(`${prefix}${name}`);
        const role = entry ? parse(entry) : undefined;
        if (!role || typeof role.aggregationRule !== 'object' || role.aggregationRule === null) return;
        const selectors = selectorsOf(role);
        if (typeof selectors === 'string') throw new Error(`clusterrole ${name}: ${selectors}`);
        const all = entries()
          .filter((e) => e.name !== name)
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        const rules: unknown[] = [];
        const seen = new Set<string>();
        for (const selector of selectors) {
          for (const e of all) {
            if (!selector.matches(e.labels)) continue;
            const other = parse(e);
            for (const rule of Array.isArray(other?.rules) ? (other!.rules as unknown[]) : []) {
              const key = ruleKey(rule);
              if (seen.has(key)) continue;
              seen.add(key);
              rules.push(rule);
            }
          }
        }
        const current = Array.isArray(role.rules) ? (role.rules as unknown[]) : [];
        if (current.length === rules.length && current.every((c, i) => ruleKey(c) === ruleKey(rules[i]))) return;
        env.log.info('aggregating cluster role rules', { clusterRole: name, rules: rules.length });
        await env.registries.for(r)!.update(r, ctx(), name, { ...role, rules });
      },
    },
    env.cache,
    env.log,
  );
}
