// internal/admission/policy/status-controller owns upstream's
// validatingadmissionpolicy-status-controller (leader-only writes): each policy whose
// status.observedGeneration is behind its generation is type checked (type-check.ts) and gets
// status.typeChecking.expressionWarnings and status.observedGeneration, written through the
// status sub-resource as a system user. A conflict or a lost leadership is retried by the
// reconciler; a policy deleted meanwhile is left alone.
// Imports: apierrors, controllers (reconciler, env), registry/keys, schema/openapi-index,
// policy/type-check, policy/validating-policy (resource names).

import { isNotFound } from '../../apierrors/status.js';
import { Reconciler } from '../../controllers/reconciler.js';
import type { ControllerEnv } from '../../controllers/serviceaccount-controllers.js';
import { objectKey, resourcePrefix } from '../../registry/keys.js';
import type { SchemaIndex } from '../../schema/openapi-index.js';
import { typeCheckPolicy } from './type-check.js';
import { ADMISSION_UPSTREAM_GROUP, POLICIES } from './validating-policy.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const STATUS_CONTROLLER = 'validatingadmissionpolicy-status-controller';

export function validatingPolicyStatusController(env: ControllerEnv, schemas: SchemaIndex): Reconciler {
  const prefix = resourcePrefix(POLICIES);
  const ctx = () => ({ user: { name: `system:serviceaccount:kube-system:${STATUS_CONTROLLER}`, groups: ['system:masters', 'system:authenticated'] }, manager: STATUS_CONTROLLER, namespace: '', dryRun: false, warnings: [] as string[] });
  return new Reconciler(
    {
      name: STATUS_CONTROLLER,
      sources: [{ prefix, keys: (type, e) => (type === 'DELETED' ? [] : [e.name]) }],
      async reconcile(name) {
        const entry = env.cache.resource(prefix).get(objectKey(POLICIES, '', name));
        if (!entry || entry.corrupt) return;
        const policy = JSON.parse(entry.bytes.toString('utf8')) as Obj;
        const meta = isObj(policy.metadata) ? policy.metadata : {};
        const status = isObj(policy.status) ? policy.status : {};
        const generation = typeof meta.generation === 'number' ? meta.generation : 0;
        if (status.observedGeneration === generation) return;
        const warnings = typeCheckPolicy(policy, env.catalog, schemas);
        const r = env.catalog.resource(env.naming.group(ADMISSION_UPSTREAM_GROUP), 'v1', 'validatingadmissionpolicies');
        if (!r) return;
        const next = { ...status, observedGeneration: generation, typeChecking: warnings.length ? { expressionWarnings: warnings } : {} };
        try {
          await env.registries.for(r)!.update(r, ctx(), name, { ...policy, status: next }, 'status');
        } catch (e) {
          if (isNotFound(e)) return;
          throw e;
        }
      },
    },
    env.cache,
    env.log,
  );
}
