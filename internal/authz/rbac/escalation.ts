// internal/authz/rbac/escalation owns RBAC escalation prevention (upstream's policy-based role
// and binding storage, as a validating admission plugin on creates and updates, dry runs
// included): a Role or ClusterRole may be written only by a user who holds every rule in it at
// the same scope, or who may `escalate` it; setting (or keeping) an aggregationRule needs full
// authority. A RoleBinding or ClusterRoleBinding may be written only by a user who may `bind`
// the role it references, or who holds every rule of that role at the binding's scope (a
// missing role then fails with its not-found text). system:masters always passes; an update
// that changes only owner references, finalizers or managed fields is not checked (the garbage
// collector must be able to finish a deletion). The 403 texts are upstream's.
// Imports: admission, apierrors, auth/user, authz/authorizer, naming, rules, authorizer (RBAC).

import type { AdmissionPlugin, AdmissionRequest, JsonObject } from '../../admission/admission.js';
import { errors } from '../../apierrors/status.js';
import { MASTERS_GROUP, type UserInfo } from '../../auth/user.js';
import type { Attributes, Decision } from '../authorizer.js';
import { RBAC_UPSTREAM_GROUP, type RbacIndex } from './index.js';
import { compactRules, compactString, covers, goQuote, goQuoteList, rule, toPolicyRule, type PolicyRule } from './rules.js';

export interface EscalationDeps {
  index: RbacIndex;
  /** The whole authorizer chain (escalate and bind are asked of every authorizer, as upstream). */
  authorize(a: Attributes): Promise<Decision> | Decision;
}

/** What only cluster-admin holds: every verb on every resource and URL. */
const FULL_AUTHORITY: PolicyRule[] = [rule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }), rule({ verbs: ['*'], nonResourceURLs: ['*'] })];

/** upstream's ConfirmNoEscalation: the message when `user` lacks some of `rules` at `namespace`, else undefined. */
export function escalationMessage(index: RbacIndex, user: UserInfo, namespace: string, rules: readonly PolicyRule[]): string | undefined {
  const held = index.rulesFor(user, namespace);
  const { covered, missing } = covers(held.rules, rules);
  if (covered) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${goQuote(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  // RulesFor's errors come as one aggregate in a list.
  if (held.errors.length) msg += `; resolution errors: [${held.errors.length === 1 ? held.errors[0] : `[${held.errors.join(', ')}]`}]`;
  return msg;
}

const rulesOf = (o: JsonObject | undefined): PolicyRule[] => (Array.isArray(o?.rules) ? (o!.rules as unknown[]).map(toPolicyRule) : []);

const hasAggregationRule = (o: JsonObject | undefined): boolean => typeof o?.aggregationRule === 'object' && o.aggregationRule !== null;

/** Upstream's IsOnlyMutatingGCFields: the update changes nothing but GC-owned metadata. */
export function onlyGcFieldsChange(obj: JsonObject | undefined, old: JsonObject | undefined): boolean {
  if (!obj || !old) return false;
  const strip = (o: JsonObject): unknown => {
    const meta = { ...((o.metadata ?? {}) as JsonObject) };
    for (const k of ['ownerReferences', 'finalizers', 'selfLink', 'managedFields', 'resourceVersion', 'generation']) delete meta[k];
    return canonical({ ...o, metadata: meta });
  };
  return JSON.stringify(strip(obj)) === JSON.stringify(strip(old));
}

/** Key-sorted copy with empty lists and nulls dropped (Semantic.DeepEqual treats nil and empty alike). */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    const x = (v as Record<string, unknown>)[k];
    if (x === null || x === undefined || (Array.isArray(x) && x.length === 0)) continue;
    out[k] = canonical(x);
  }
  return out;
}

const ROLE_RESOURCES = new Set(['roles', 'clusterroles']);
const BINDING_RESOURCES = new Set(['rolebindings', 'clusterrolebindings']);

export function rbacEscalationPlugin(deps: EscalationDeps): AdmissionPlugin {
  const { index } = deps;
  const allowed = async (user: UserInfo, verb: string, a: Pick<Attributes, 'apiGroup' | 'resource' | 'name' | 'namespace'>): Promise<boolean> => {
    const d = await deps.authorize({ user, verb, isResourceRequest: true, path: '', apiVersion: '*', subresource: '', ...a });
    return d.decision === 'allow';
  };

  async function checkRole(req: AdmissionRequest, forbidden: (msg: string) => Error): Promise<void> {
    // upstream asks with the request's own name: none on a create (a POST to the collection).
    const name = req.operation === 'CREATE' ? '' : req.name;
    if (await allowed(req.user, 'escalate', { apiGroup: req.resource.group, resource: req.resource.resource, name, namespace: req.namespace })) return;
    const msg = escalationMessage(index, req.user, req.namespace, rulesOf(req.object));
    if (msg) throw forbidden(msg);
    if (req.resource.resource === 'clusterroles' && (hasAggregationRule(req.object) || (req.operation === 'UPDATE' && hasAggregationRule(req.oldObject)))) {
      // An aggregation rule can gather anything (and stop a role from being narrowed).
      if (escalationMessage(index, req.user, req.namespace, FULL_AUTHORITY)) throw forbidden('must have cluster-admin privileges to use the aggregationRule');
    }
  }

  async function checkBinding(req: AdmissionRequest, forbidden: (msg: string) => Error): Promise<void> {
    const ref = (req.object?.roleRef ?? {}) as { apiGroup?: string; kind?: string; name?: string };
    const kind = ref.kind ?? '';
    const refName = ref.name ?? '';
    if (kind === 'ClusterRole' || kind === 'Role') {
      const resource = kind === 'ClusterRole' ? 'clusterroles' : 'roles';
      if (await allowed(req.user, 'bind', { apiGroup: ref.apiGroup ?? '', resource, name: refName, namespace: req.namespace })) return;
    }
    const rules = index.roleRules({ kind, name: refName }, req.namespace);
    if (typeof rules === 'string') throw forbidden(rules);
    const msg = escalationMessage(index, req.user, req.namespace, rules);
    if (msg) throw forbidden(msg);
  }

  return {
    name: 'RBACEscalation',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    async validate(req) {
      const r = req.resource;
      if (r.upstreamGroup !== RBAC_UPSTREAM_GROUP || req.subresource !== '') return;
      const isRole = ROLE_RESOURCES.has(r.resource);
      if (!isRole && !BINDING_RESOURCES.has(r.resource)) return;
      if (req.user.groups.includes(MASTERS_GROUP)) return;
      if (req.operation === 'UPDATE' && onlyGcFieldsChange(req.object, req.oldObject)) return;
      const objectName = String(((req.object?.metadata ?? {}) as { name?: unknown }).name ?? req.name);
      const forbidden = (msg: string) => errors.forbidden({ group: r.group, name: r.resource }, objectName, msg);
      if (isRole) await checkRole(req, forbidden);
      else await checkBinding(req, forbidden);
    },
  };
}
