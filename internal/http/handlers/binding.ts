// internal/http/handlers/binding owns binding a pod to a node (POST pods/<name>/binding, or the
// namespace's bindings collection): a scheduler's one write. The pod must be unscheduled (409
// otherwise); the binding sets spec.nodeName and, as upstream, merges the binding's
// annotations into the pod's. Imports: apierrors, http, registry.

import type { Context } from 'hono';
import { errors } from '../../apierrors/status.js';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { successStatus } from '../respond.js';
import { chooseRepresentation, META_SCHEMA, writeObject } from '../representations.js';
import type { ResourceRequest } from './resource-request.js';
import { readWriteBody } from './write-body.js';

type JsonObject = Record<string, unknown>;

export async function handleBinding(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const rep = chooseRepresentation(c, deps, rr.resource, 'write');
  // The body is a Binding whatever path it came by: read and field-validate it as one.
  const bindings = deps.catalog.resource('', 'v1', 'bindings')!;
  const asBinding = { ...rr, resource: bindings, subresource: undefined, registry: deps.registries.for(bindings) ?? rr.registry };
  const binding = await readWriteBody(c, deps, asBinding, { apiVersion: 'v1', kind: 'Binding' });
  const meta = (binding.metadata ?? {}) as JsonObject;
  const podName = rr.info.name || String(meta.name ?? '');
  const target = (binding.target ?? {}) as JsonObject;
  if (!podName) throw errors.badRequest('a binding needs metadata.name (the pod)');
  if (typeof target.name !== 'string' || target.name === '') {
    throw errors.invalid({ group: '', name: 'Binding' }, podName, [{ type: 'FieldValueRequired', field: 'target.name' }]);
  }
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') {
    throw errors.invalid({ group: '', name: 'Binding' }, podName, [{ type: 'FieldValueNotSupported', field: 'target.kind', value: target.kind, detail: 'supported values: "Node"' }]);
  }
  const pods = deps.catalog.resource('', 'v1', 'pods')!;
  const registry = deps.registries.for(pods)!;
  await registry.patch(pods, { ...rr.ctx, namespace: rr.namespace }, podName, 'binding', {
    build: (pod) => {
      const spec = (pod.spec ?? {}) as JsonObject;
      if (spec.nodeName) throw errors.conflict({ group: '', name: 'pods' }, podName, `pod ${podName} is already assigned to node "${String(spec.nodeName)}"`);
      if ((pod.metadata as JsonObject | undefined)?.deletionTimestamp) throw errors.conflict({ group: '', name: 'pods' }, podName, 'pod is being deleted, cannot be assigned to a host');
      const podMeta = (pod.metadata ?? {}) as JsonObject;
      const annotations = { ...((podMeta.annotations as JsonObject | undefined) ?? {}), ...((meta.annotations as JsonObject | undefined) ?? {}) };
      return { ...pod, metadata: { ...podMeta, ...(Object.keys(annotations).length ? { annotations } : {}) }, spec: { ...spec, nodeName: target.name } };
    },
  });
  return writeObject(c, deps, rep, rr.resource, successStatus({}), 201, `${META_SCHEMA}Status`);
}
