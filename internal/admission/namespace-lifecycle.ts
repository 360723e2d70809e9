// internal/admission/namespace-lifecycle owns the namespace rules of writes: namespaced
// objects may only be created in a namespace that exists (404) and is not terminating (403),
// and the system namespaces cannot be deleted. As upstream's plugin it acts in the mutating
// phase, so a doomed request is refused before mutating webhooks are called or addresses are
// reserved for it. Imports: admission, apierrors.

import { errors } from '../apierrors/status.js';
import type { AdmissionPlugin, AdmissionRequest } from './admission.js';

export interface NamespaceState {
  exists: boolean;
  terminating: boolean;
}

/** Looks a namespace up (from the watch cache, after it has caught up with the store). */
export type NamespaceLookup = (name: string) => Promise<NamespaceState>;

/** Namespaced virtual resources that do not create objects in the namespace. */
const EXEMPT = new Set(['localsubjectaccessreviews']);

export function namespaceLifecycle(lookup: NamespaceLookup, immortal: readonly string[]): AdmissionPlugin {
  return {
    name: 'NamespaceLifecycle',
    handles: (op) => op === 'CREATE' || op === 'DELETE',
    async admit(req: AdmissionRequest): Promise<void> {
      const isNamespace = req.resource.group === '' && req.resource.resource === 'namespaces';
      if (req.operation === 'DELETE') {
        if (isNamespace && !req.subresource && immortal.includes(req.name)) {
          throw errors.forbidden({ group: '', name: 'namespaces' }, req.name, 'this namespace may not be deleted');
        }
        return;
      }
      if (!req.resource.namespaced || isNamespace || EXEMPT.has(req.resource.resource) || !req.namespace) return;
      // Sub-resource creates (bindings, evictions) act on existing objects; the namespace check
      // still applies to them upstream, so it does here.
      refuseCreateIn(await lookup(req.namespace), req.namespace, req.resource, req.name);
    },
  };
}

/**
 * The plugin's answer to a create in a namespace in `state`: 404 when it does not exist, 403
 * when it is terminating. The registry asks it again, from a consistent read, when the
 * namespace changed between admission and the write (registry's namespace guard).
 */
export function refuseCreateIn(state: NamespaceState, namespace: string, resource: { group: string; resource: string }, name: string): void {
  if (!state.exists) throw errors.notFound({ group: '', name: 'namespaces' }, namespace);
  if (state.terminating) {
    throw errors.forbidden({ group: resource.group, name: resource.resource }, name || undefined, `unable to create new content in namespace ${namespace} because it is being terminated`);
  }
}
