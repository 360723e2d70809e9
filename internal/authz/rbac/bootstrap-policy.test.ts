import { describe, expect, it } from 'vitest';
import { createNaming, NAMING_MODES } from '../../naming/naming.js';
import { bootstrapPolicy, policyKeys } from './bootstrap-policy.js';

describe.each(NAMING_MODES)('bootstrap policy (--naming=%s)', (mode) => {
  const naming = createNaming(mode);
  const policy = bootstrapPolicy(naming);
  const keys = policyKeys(naming);
  const roleNames = new Set(policy.clusterRoles.map((r) => r.metadata.name));

  it('has the default cluster roles of upstream 1.32', () => {
    for (const name of [
      'cluster-admin', 'admin', 'edit', 'view', 'system:aggregate-to-admin', 'system:aggregate-to-edit', 'system:aggregate-to-view',
      'system:basic-user', 'system:discovery', 'system:public-info-viewer', 'system:node', 'system:node-proxier', 'system:monitoring',
      'system:kube-scheduler', 'system:kube-controller-manager', 'system:kube-dns', 'system:volume-scheduler', 'system:auth-delegator',
      'system:heapster', 'system:kubelet-api-admin', 'system:node-bootstrapper', 'system:persistent-volume-provisioner',
      'system:service-account-issuer-discovery', 'system:certificates.k8s.io:kubelet-serving-approver',
      'system:controller:namespace-controller', 'system:controller:clusterrole-aggregation-controller', 'system:controller:generic-garbage-collector',
    ]) expect(roleNames, name).toContain(name);
    // Feature-gated in 1.32 (off by default): not part of the policy.
    expect(roleNames).not.toContain('system:controller:resource-claim-controller');
    expect(roleNames).not.toContain('system:controller:service-cidrs-controller');
  });

  it('names are unique per kind and namespace', () => {
    for (const list of [policy.clusterRoles, policy.clusterRoleBindings, policy.roles, policy.roleBindings]) {
      const ids = list.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('every binding refers to a role of the policy, in the served RBAC group', () => {
    const roles = new Set(policy.roles.map((r) => `${r.metadata.namespace}/${r.metadata.name}`));
    for (const b of policy.clusterRoleBindings) {
      expect(b.roleRef).toEqual({ apiGroup: keys.rbacGroup, kind: 'ClusterRole', name: expect.any(String) });
      expect(roleNames, b.metadata.name).toContain(b.roleRef.name);
    }
    for (const b of policy.roleBindings) expect(roles, b.metadata.name).toContain(`${b.metadata.namespace}/${b.roleRef.name}`);
    // Every controller role is bound to its kube-system service account.
    for (const r of policy.clusterRoles.filter((x) => x.metadata.name.startsWith('system:controller:'))) {
      const b = policy.clusterRoleBindings.find((x) => x.metadata.name === r.metadata.name);
      expect(b?.subjects).toEqual([{ kind: 'ServiceAccount', name: r.metadata.name.slice('system:controller:'.length), namespace: 'kube-system' }]);
    }
  });

  it('binds as upstream does', () => {
    const subjects = (name: string) => policy.clusterRoleBindings.find((b) => b.metadata.name === name)?.subjects.map((s) => `${s.kind}:${s.name}`);
    expect(subjects('cluster-admin')).toEqual(['Group:system:masters']);
    expect(subjects('system:public-info-viewer')).toEqual(['Group:system:authenticated', 'Group:system:unauthenticated']);
    expect(subjects('system:discovery')).toEqual(['Group:system:authenticated']);
    expect(subjects('system:basic-user')).toEqual(['Group:system:authenticated']);
    expect(subjects('system:node')).toEqual([]);
    expect(subjects('system:service-account-issuer-discovery')).toEqual(['Group:system:serviceaccounts']);
  });

  it('labels, annotations and groups follow the naming', () => {
    const domain = mode === 'cluster' ? 'cluster.io' : 'kubernetes.io';
    const rbac = mode === 'cluster' ? 'rbac.authorization.cluster.io' : 'rbac.authorization.k8s.io';
    for (const o of [...policy.clusterRoles, ...policy.clusterRoleBindings, ...policy.roles, ...policy.roleBindings]) {
      expect(o.apiVersion).toBe(`${rbac}/v1`);
      expect(o.metadata.labels[`${domain}/bootstrapping`]).toBe('rbac-defaults');
      expect(o.metadata.annotations).toEqual({ [`rbac.authorization.${domain}/autoupdate`]: 'true' });
    }
    const byName = (n: string) => policy.clusterRoles.find((r) => r.metadata.name === n)!;
    expect(byName('admin').aggregationRule).toEqual({ clusterRoleSelectors: [{ matchLabels: { [`${rbac}/aggregate-to-admin`]: 'true' } }] });
    expect(byName('view').metadata.labels[`${rbac}/aggregate-to-edit`]).toBe('true');
    expect(byName('system:aggregate-to-admin').rules).toContainEqual(expect.objectContaining({ apiGroups: [rbac], resources: ['roles', 'rolebindings'] }));
    const groups = [...policy.clusterRoles, ...policy.roles].flatMap((r) => r.rules.flatMap((x) => x.apiGroups ?? []));
    if (mode === 'cluster') expect(groups.filter((g) => g.endsWith('k8s.io'))).toEqual([]);
    else expect(groups).toContain('events.k8s.io');
    expect(groups).toContain(mode === 'cluster' ? 'coordination.cluster.io' : 'coordination.k8s.io');
  });

  it('every rule is well formed: verbs, and either resources with groups or non-resource URLs in cluster roles only', () => {
    for (const r of [...policy.clusterRoles, ...policy.roles]) {
      for (const rule of r.rules) {
        expect(rule.verbs.length).toBeGreaterThan(0);
        if (rule.nonResourceURLs) {
          expect(r.kind).toBe('ClusterRole');
          expect(rule.apiGroups).toBeUndefined();
        } else {
          expect(rule.apiGroups!.length, r.metadata.name).toBeGreaterThan(0);
          expect(rule.resources!.length, r.metadata.name).toBeGreaterThan(0);
        }
      }
    }
  });
});
