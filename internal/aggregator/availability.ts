// internal/aggregator/availability owns the APIServices' `Available` condition (leader-only
// writes): local APIServices are Available (Local); for one with a service reference the
// Service, its port and its Endpoints are checked as upstream's availability controller checks
// them, then the extension's `/apis/<group>/<version>` is fetched with the front-proxy
// certificate. Checked on every change of the APIService, its Service or Endpoints and every
// 30 s. Every replica proxies regardless of who writes the condition.
// Imports: controllers/reconciler, registry, aggregator (apiservices, client).

import { Reconciler } from '../controllers/reconciler.js';
import type { ControllerEnv } from '../controllers/serviceaccount-controllers.js';
import { resourcePrefix } from '../registry/keys.js';
import type { CacheEntry } from '../watchcache/types.js';
import type { ApiServices, ApiServiceView } from './apiservices.js';
import type { ExtensionClient } from './extension-client.js';

export const AVAILABILITY_CONTROLLER = 'kube-apiserver-aggregator-availability';
const RECHECK_MS = 30_000;

type Obj = Record<string, unknown>;
export interface Availability {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** Reads a Service or Endpoints as the cache holds it. */
export type CoreReader = (resource: 'services' | 'endpoints', namespace: string, name: string) => Obj | undefined;

export const LOCAL_AVAILABILITY: Availability = { status: 'True', reason: 'Local', message: 'Local APIServices are always available' };

/** The Available condition an APIService should have now. */
export async function checkAvailability(api: ApiServiceView, read: CoreReader, client: ExtensionClient): Promise<Availability> {
  if (!api.service) return LOCAL_AVAILABILITY;
  const { namespace, name, port } = api.service;
  const svc = read('services', namespace, name);
  if (!svc) return { status: 'False', reason: 'ServiceNotFound', message: `service/${name} in "${namespace}" is not present` };
  const spec = (svc.spec ?? {}) as { type?: string; ports?: Array<{ name?: string; port?: number }> };
  if (spec.type !== 'ExternalName') {
    const svcPort = (spec.ports ?? []).find((p) => p.port === port);
    if (!svcPort) return { status: 'False', reason: 'ServicePortError', message: `service/${name} in "${namespace}" is not listening on port ${port}` };
    const endpoints = read('endpoints', namespace, name);
    if (!endpoints) return { status: 'False', reason: 'EndpointsNotFound', message: `cannot find endpoints for service/${name} in "${namespace}"` };
    const portName = svcPort.name ?? '';
    const subsets = (endpoints.subsets ?? []) as Array<{ addresses?: unknown[]; ports?: Array<{ name?: string }> }>;
    const ready = subsets.some((s) => (s.addresses ?? []).length > 0 && (s.ports ?? []).some((p) => (p.name ?? '') === portName));
    if (!ready) return { status: 'False', reason: 'MissingEndpoints', message: `endpoints for service/${name} in "${namespace}" have no addresses with port name "${portName}"` };
  }
  const path = `/apis/${api.group}/${api.version}`;
  const where = `https://${name}.${namespace}.svc:${port}${path}`;
  try {
    const res = await client.get(api, path);
    if (res.status < 200 || res.status >= 300) {
      return { status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${where}: bad status from ${where}: ${res.status}` };
    }
  } catch (e) {
    return { status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${where}: ${e instanceof Error ? e.message : String(e)}` };
  }
  return { status: 'True', reason: 'Passed', message: 'all checks passed' };
}

/** The status with the Available condition set (lastTransitionTime kept while the status holds). */
export function withAvailability(raw: Obj, a: Availability, now: Date): Obj | undefined {
  const status = (raw.status ?? {}) as Obj;
  const conditions = Array.isArray(status.conditions) ? (status.conditions as Obj[]) : [];
  const old = conditions.find((c) => c.type === 'Available');
  if (old && old.status === a.status && old.reason === a.reason && old.message === a.message) return undefined;
  const condition = {
    type: 'Available',
    status: a.status,
    lastTransitionTime: old && old.status === a.status && typeof old.lastTransitionTime === 'string' ? old.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    reason: a.reason,
    message: a.message,
  };
  return { ...raw, status: { ...status, conditions: [...conditions.filter((c) => c.type !== 'Available'), condition] } };
}

export function availabilityController(env: ControllerEnv, apis: ApiServices, read: CoreReader, client: ExtensionClient): Reconciler {
  const core = (resource: string) => resourcePrefix({ upstreamGroup: '', resource });
  const ctx = () => ({
    user: { name: `system:serviceaccount:kube-system:${AVAILABILITY_CONTROLLER}`, groups: ['system:masters', 'system:authenticated'] },
    manager: AVAILABILITY_CONTROLLER,
    namespace: '',
    dryRun: false,
    warnings: [] as string[],
  });
  // A Service or Endpoints change concerns the APIServices that name it.
  const referencing = (e: CacheEntry): string[] => apis.all().filter((a) => a.service?.namespace === e.namespace && a.service.name === e.name).map((a) => a.name);
  return new Reconciler(
    {
      name: AVAILABILITY_CONTROLLER,
      sources: [
        { prefix: apis.prefix, keys: (_t, e) => [e.name] },
        { prefix: core('services'), keys: (_t, e) => referencing(e) },
        { prefix: core('endpoints'), keys: (_t, e) => referencing(e) },
      ],
      async reconcile(name) {
        const api = apis.byName(name);
        if (!api) return;
        const a = await checkAvailability(api, read, client);
        const updated = withAvailability(api.raw, a, new Date());
        if (updated) {
          env.log.info('aggregator: APIService availability', { apiService: name, status: a.status, reason: a.reason });
          await env.registries.for(apis.resource)!.update(apis.resource, ctx(), name, updated, 'status');
        }
        return api.service ? RECHECK_MS : undefined;
      },
    },
    env.cache,
    env.log,
  );
}
