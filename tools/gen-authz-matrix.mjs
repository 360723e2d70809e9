#!/usr/bin/env node
// tools/gen-authz-matrix.mjs owns the expected table of the authorization matrix test
// (e2e/authz-matrix.test.ts): it reads upstream's bootstrap-policy testdata kept as test input
// under e2e/fixtures/upstream-rbac/, resolves ClusterRole aggregation, and decides every cell
// (default cluster role × verb × a representative resource of every served group, with
// sub-resources and resource names, at cluster and namespace scope; non-resource URLs) with
// a tiny RBAC evaluator of its own, written from the RBAC rules, independent of the server's.
// Each role is bound to one test user by a ClusterRoleBinding and to another by a RoleBinding
// in the matrix namespace; both users are in system:authenticated, so the default bindings
// for that group count too. Output: e2e/fixtures/authz-matrix.json (upstream group names; the
// test maps them through the naming).
// Usage: node tools/gen-authz-matrix.mjs [--check]  (--check: fail if the file is stale)

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load as loadYaml } from 'js-yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(root, 'e2e', 'fixtures', 'upstream-rbac');
const output = join(root, 'e2e', 'fixtures', 'authz-matrix.json');
const items = (file) => loadYaml(readFileSync(join(fixtures, file), 'utf8')).items;

const NAMESPACE = 'authz-matrix';
const GROUPS = ['system:authenticated'];

// --- policy --------------------------------------------------------------------------------

const defaultRoles = items('cluster-roles.yaml');
const controllerRoles = items('controller-roles.yaml');
const bindings = items('cluster-role-bindings.yaml');
const all = [...defaultRoles, ...controllerRoles];

/** Aggregation as the controller does it: the union of every selected role's rules, to a fixpoint. */
function resolveAggregation(roles) {
  const rules = new Map(roles.map((r) => [r.metadata.name, r.rules ?? []]));
  const matches = (labels, sel) => Object.entries(sel.matchLabels ?? {}).every(([k, v]) => (labels ?? {})[k] === v);
  for (let changed = true; changed; ) {
    changed = false;
    for (const r of roles) {
      if (!r.aggregationRule) continue;
      const union = [];
      for (const other of roles) {
        if (other === r) continue;
        if (r.aggregationRule.clusterRoleSelectors.some((s) => matches(other.metadata.labels, s))) union.push(...rules.get(other.metadata.name));
      }
      const seen = new Set();
      const deduped = union.filter((x) => {
        const k = JSON.stringify(x);
        return seen.has(k) ? false : (seen.add(k), true);
      });
      if (JSON.stringify(deduped) !== JSON.stringify(rules.get(r.metadata.name))) {
        rules.set(r.metadata.name, deduped);
        changed = true;
      }
    }
  }
  return rules;
}
const rulesOf = resolveAggregation(all);

// --- evaluator -----------------------------------------------------------------------------

const has = (list, v) => (list ?? []).includes('*') || (list ?? []).includes(v);
function resourceMatches(list, resource, sub) {
  const combined = sub ? `${resource}/${sub}` : resource;
  return (list ?? []).some((x) => x === '*' || x === combined || (sub && x === `*/${sub}`));
}
function allowsResource(rule, a) {
  if (rule.nonResourceURLs) return false;
  return has(rule.verbs, a.verb) && has(rule.apiGroups, a.group) && resourceMatches(rule.resources, a.resource, a.sub) &&
    (!rule.resourceNames?.length || (a.name !== '' && rule.resourceNames.includes(a.name)));
}
function allowsPath(rule, verb, path) {
  if (!rule.nonResourceURLs) return false;
  return has(rule.verbs, verb) && rule.nonResourceURLs.some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

/** Rules that apply to a request: the default group bindings (cluster-wide) + the role under test through its binding. */
function decide(role, binding, a) {
  const cluster = bindings
    .filter((b) => (b.subjects ?? []).some((s) => s.kind === 'Group' && GROUPS.includes(s.name)))
    .flatMap((b) => rulesOf.get(b.roleRef.name) ?? []);
  const own = rulesOf.get(role) ?? [];
  const ruleSets = binding === 'crb' ? [...cluster, ...own] : cluster;
  // binding 'none': the default group bindings alone.
  if (a.path !== undefined) return ruleSets.some((r) => allowsPath(r, a.verb, a.path));
  if (ruleSets.some((r) => allowsResource(r, a))) return true;
  // A RoleBinding grants the role's resource rules inside its namespace only.
  return binding === 'rb' && a.namespace === NAMESPACE && own.some((r) => allowsResource(r, a));
}

// --- cells ---------------------------------------------------------------------------------

const STANDARD = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
/** [upstream group, resource[/sub], namespaced, extra verbs, resource name]. One per line: a representative of every served group. */
const RESOURCES = [
  ['', 'pods', true], ['', 'pods/log', true], ['', 'pods/exec', true], ['', 'pods/status', true], ['', 'secrets', true],
  ['', 'serviceaccounts', true, ['impersonate']], ['', 'serviceaccounts/token', true],
  ['', 'namespaces', false], ['', 'nodes', false, ['proxy']], ['', 'users', false, ['impersonate']],
  ['apps', 'deployments', true], ['apps', 'deployments/scale', true],
  ['batch', 'jobs', true], ['autoscaling', 'horizontalpodautoscalers', true], ['policy', 'poddisruptionbudgets', true],
  ['rbac.authorization.k8s.io', 'roles', true, ['bind', 'escalate']], ['rbac.authorization.k8s.io', 'rolebindings', true],
  ['rbac.authorization.k8s.io', 'clusterroles', false, ['bind', 'escalate']],
  ['authorization.k8s.io', 'subjectaccessreviews', false], ['authorization.k8s.io', 'selfsubjectaccessreviews', false],
  ['authentication.k8s.io', 'tokenreviews', false],
  ['certificates.k8s.io', 'certificatesigningrequests', false], ['certificates.k8s.io', 'signers', false, ['approve', 'sign'], 'kubernetes.io/kubelet-serving'],
  ['coordination.k8s.io', 'leases', true, [], 'kube-scheduler'],
  ['discovery.k8s.io', 'endpointslices', true], ['events.k8s.io', 'events', true], ['networking.k8s.io', 'ingresses', true],
  ['node.k8s.io', 'runtimeclasses', false], ['scheduling.k8s.io', 'priorityclasses', false], ['storage.k8s.io', 'csinodes', false],
  ['admissionregistration.k8s.io', 'validatingadmissionpolicies', false], ['apiextensions.k8s.io', 'customresourcedefinitions', false],
  ['apiregistration.k8s.io', 'apiservices', false], ['flowcontrol.apiserver.k8s.io', 'flowschemas', false], ['resource.k8s.io', 'resourceclaims', true],
];
const PATHS = ['/healthz', '/livez', '/readyz', '/readyz/ping', '/version', '/api', '/api/v1', '/apis', '/metrics', '/openapi/v2', '/.well-known/openid-configuration'];
const PATH_VERBS = ['get', 'post'];

const roleNames = [...defaultRoles, ...controllerRoles].map((r) => r.metadata.name);
/** Every resource column: [verb, upstream group, resource[/sub], name, namespace]. */
const resourceColumns = RESOURCES.flatMap(([group, full, namespaced, extra = [], name = '']) =>
  [...STANDARD, ...extra].map((verb) => [verb, group, full, name, namespaced ? NAMESPACE : '']));
const pathColumns = PATHS.flatMap((path) => PATH_VERBS.map((verb) => [verb, path]));
const attributes = ([verb, group, full, name, namespace]) => {
  const [resource, sub = ''] = full.split('/');
  return { verb, group, resource, sub, name, namespace };
};
/**
 * Rows: [role, binding, resource bits, path bits], one character per column ('1' allowed).
 * Through a RoleBinding only the namespaced columns differ from role to role (cluster-scoped
 * requests and paths get the default group bindings alone), so those rows carry '-' (not
 * checked) elsewhere; controller roles are bound cluster-wide in practice and have no
 * RoleBinding row.
 */
const rows = [];
for (const role of roleNames) {
  for (const binding of role.startsWith('system:controller:') ? ['crb'] : ['crb', 'rb']) {
    const resourceBits = resourceColumns.map((c) => (binding === 'rb' && c[4] === '' ? '-' : decide(role, binding, attributes(c)) ? '1' : '0')).join('');
    // Controller roles hold no non-resource rules: their paths are the default bindings' (the 'none' row).
    const pathBits = pathColumns.map(([verb, path]) => (binding === 'rb' || role.startsWith('system:controller:') ? '-' : decide(role, binding, { verb, path }) ? '1' : '0')).join('');
    rows.push([role, binding, resourceBits, pathBits]);
  }
}
// The rows above skip RoleBinding paths; one row checks them for a user bound to nothing.
rows.push(['', 'none', resourceColumns.map((c) => (decide('', 'none', attributes(c)) ? '1' : '0')).join(''), pathColumns.map(([verb, path]) => (decide('', 'none', { verb, path }) ? '1' : '0')).join('')]);
const bits = rows.flatMap((r) => [...r[2], ...r[3]]).filter((b) => b !== '-');

const out = `${JSON.stringify(
  {
    comment: 'Generated by tools/gen-authz-matrix.mjs from e2e/fixtures/upstream-rbac/; do not edit. Columns use upstream group names. A row: [role, binding (crb = ClusterRoleBinding, rb = RoleBinding in namespace, none = no binding), one character per resource column, one per path column] with 1 allowed, 0 denied, - not checked.',
    namespace: NAMESPACE,
    groups: GROUPS,
    cells: bits.length,
    allowed: bits.filter((b) => b === '1').length,
    resourceColumns,
    pathColumns,
    rows,
  },
  null,
  1,
)}\n`;
if (process.argv.includes('--check')) {
  if (readFileSync(output, 'utf8') !== out) {
    console.error(`${output} is stale: run node tools/gen-authz-matrix.mjs`);
    process.exit(1);
  }
} else {
  writeFileSync(output, out);
  console.log(`wrote ${output}: ${bits.length} cells, ${roleNames.length} roles`);
}
