// internal/authz/rbac/pending-defaults owns what RBAC grants before the bootstrap policy is in
// the store: every default ClusterRoleBinding the index does not hold is in force as the policy
// defines it (its subjects, its role's default rules). A fresh cluster's replicas answer
// health and discovery to their probes while they wait for the quorum that will write the
// policy (a liveness probe refused there would restart a replica that is only waiting for its
// peers); once the bindings are stored, only the stored ones count, so an administrator's
// edits hold. A deleted default binding is the default again until the next start writes it
// back, as upstream's reconciliation does. Imports: naming, bootstrap-policy, index, rules.

import type { UserInfo } from '../../auth/user.js';
import type { Naming } from '../../naming/naming.js';
import type { Attributes } from '../authorizer.js';
import { bootstrapPolicy } from './bootstrap-policy.js';
import { subjectApplies, type RbacIndex, type Subject } from './index.js';
import { ruleAllows, toPolicyRule, type PolicyRule } from './rules.js';

interface DefaultBinding {
  name: string;
  role: string;
  subjects: Subject[];
  rules: PolicyRule[];
}

export class PendingDefaults {
  private readonly bindings: DefaultBinding[];

  constructor(
    private readonly index: RbacIndex,
    naming: Naming,
  ) {
    const policy = bootstrapPolicy(naming);
    const roles = new Map(policy.clusterRoles.map((r) => [r.metadata.name, r.rules.map(toPolicyRule)]));
    this.bindings = policy.clusterRoleBindings
      .filter((b) => b.subjects.length > 0 && roles.has(b.roleRef.name))
      .map((b) => ({
        name: b.metadata.name,
        role: b.roleRef.name,
        subjects: b.subjects.map((s) => ({ kind: s.kind, name: s.name, namespace: s.namespace ?? '' })),
        rules: roles.get(b.roleRef.name)!,
      }));
  }

  /** The reason when a default binding not held yet allows the request, else undefined. */
  allows(a: Attributes): string | undefined {
    for (const b of this.bindings) {
      if (this.index.hasClusterRoleBinding(b.name)) continue;
      const subject = b.subjects.find((s) => subjectApplies(a.user, s, ''));
      if (subject && b.rules.some((r) => ruleAllows(a, r))) return `RBAC: allowed by the bootstrap policy's ClusterRoleBinding "${b.name}" of ClusterRole "${b.role}" (not stored yet)`;
    }
    return undefined;
  }

  /** The default rules in force for `user` (SelfSubjectRulesReview). */
  rulesFor(user: UserInfo): PolicyRule[] {
    return this.bindings.filter((b) => !this.index.hasClusterRoleBinding(b.name) && b.subjects.some((s) => subjectApplies(user, s, ''))).flatMap((b) => b.rules);
  }
}
