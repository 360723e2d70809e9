// internal/server/bootstrap owns the objects every cluster starts with: the default, system,
// public and node-lease namespaces, and the bootstrap RBAC policy (reconciled at every start). Created through the registry like any other write, so
// they get the same defaults, labels and finalizers; an existing one is left alone.
// Imports: registry, schema, log, apierrors, naming, authz/rbac, async/bounded.

import { isAlreadyExists } from '../apierrors/status.js';
import type { Logger } from '../log/logger.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { ApiCatalog } from '../schema/catalog.js';
import type { Naming } from '../naming/naming.js';
import { createHash } from 'node:crypto';
import { reconcileBootstrapPolicy } from '../authz/rbac/reconcile-policy.js';
import { bootstrapPolicy } from '../authz/rbac/bootstrap-policy.js';
import { defaultFlowSchemas, defaultPriorityLevels, SYSTEM_PRIORITY_CLASSES } from './bootstrap-apf.js';
import { settleBounded, STARTUP_WRITES_IN_FLIGHT } from '../async/bounded.js';

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export const SYSTEM_USER = { name: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };

export async function bootstrapNamespaces(registries: RegistrySet, catalog: ApiCatalog, log: Logger): Promise<void> {
  const resource = catalog.resource('', 'v1', 'namespaces')!;
  const registry = registries.for(resource)!;
  // Independent of one another: written together, so they share a group commit (or a Raft round).
  await settleBounded(SYSTEM_NAMESPACES, STARTUP_WRITES_IN_FLIGHT, async (name) => {
    const existing = await registry.getEntry('', name).catch(() => undefined);
    if (existing) return;
    try {
      await registry.create(resource, { user: SYSTEM_USER, manager: 'kube-apiserver', namespace: '', dryRun: false, warnings: [] }, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name },
      });
      log.info('created namespace', { name });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  });
}

/**
 * A digest of the objects this build's start-up reconciles (namespaces, RBAC policy, priority
 * classes, flow-control defaults): in a cluster the leader records it once it reconciled them,
 * and a follower of the same build needs no run of its own (cluster/leader-bootstrap).
 */
export function bootstrapDigest(naming: Naming): string {
  const objects = [SYSTEM_NAMESPACES, bootstrapPolicy(naming), SYSTEM_PRIORITY_CLASSES, defaultPriorityLevels(), defaultFlowSchemas(naming)];
  return createHash('sha256').update(JSON.stringify(objects)).digest('hex').slice(0, 16);
}

/**
 * Reconciles the default roles and bindings (upstream's rbac/bootstrap-roles post-start hook):
 * a single server at every start, a cluster's leader whenever it gains leadership.
 */
export async function bootstrapRbacPolicy(registries: RegistrySet, catalog: ApiCatalog, naming: Naming, log: Logger): Promise<void> {
  const counts = await reconcileBootstrapPolicy({ registries, catalog, naming, log, user: SYSTEM_USER });
  log.info('bootstrap RBAC policy reconciled', { ...counts });
}
