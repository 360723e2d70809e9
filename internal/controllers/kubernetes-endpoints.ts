// internal/controllers/kubernetes-endpoints owns the `default/kubernetes` Service and the
// addresses it lists, as upstream's lease endpoint reconciler keeps them:
//   - every replica creates the Service at start when it is missing (ClusterIP the service
//     range's first address, port 443 "https" to the API port);
//   - every replica holds a Lease in kube-system (`apiserver-endpoint-<replica name>`, its
//     advertised address in an annotation) renewed every ttl/3 + a bit, as upstream's masterleases
//     are renewed every 10 s with a 15 s TTL;
//   - the leader-only controller turns the unexpired Leases into the `kubernetes` Endpoints and
//     EndpointSlice(s), deletes expired Leases, and looks again when the next one would expire,
//     so a replica that stops renewing drops out after its TTL.
// Replicas normally share one port; when they do not (all on 127.0.0.1 in tests), Endpoints
// get one subset per port and each extra port its own slice `kubernetes-<port>`, because one
// EndpointSlice has one port list for all its endpoints.
// Imports: controllers (objects, reconciler), log, naming.

import { isIP } from 'node:net';
import { StatusError } from '../apierrors/status.js';
import { lookup } from 'node:dns/promises';
import type { Naming } from '../naming/naming.js';
import { Reconciler } from './reconciler.js';
import { metaOf, Objects, type Obj, type ResourceRef } from './objects.js';
import type { ControllerEnv } from './serviceaccount-controllers.js';
import { KUBERNETES_SERVICE_IP } from '../pki/pki.js';

export const KUBERNETES_SERVICE = 'kubernetes';
export const LEASE_PREFIX = 'apiserver-endpoint-';
const SYSTEM_NAMESPACE = 'kube-system';
const DEFAULT_NAMESPACE = 'default';

const SERVICES: ResourceRef = ['', 'v1', 'services'];
const ENDPOINTS: ResourceRef = ['', 'v1', 'endpoints'];
const SLICES: ResourceRef = ['discovery.k8s.io', 'v1', 'endpointslices'];
const LEASES: ResourceRef = ['coordination.k8s.io', 'v1', 'leases'];

export interface ApiAddress {
  ip: string;
  port: number;
}

/** The annotation on a replica's Lease that carries its advertised `ip:port`. */
export const addressAnnotation = (naming: Naming): string => `${naming.labelPrefix('apiserver')}advertise-address`;

/** Upstream's labels on the slices its reconciler writes, in the naming's spelling. */
export function sliceLabels(naming: Naming): Record<string, string> {
  return {
    [naming.label('service-name')]: KUBERNETES_SERVICE,
    [`${naming.labelPrefix('endpointslice')}managed-by`]: `endpointslice-controller.${naming.groupDomain}`,
  };
}

const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** The Service every replica creates when it is missing. */
export function kubernetesService(port: number): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: KUBERNETES_SERVICE, namespace: DEFAULT_NAMESPACE, labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: {
      type: 'ClusterIP',
      clusterIP: KUBERNETES_SERVICE_IP,
      clusterIPs: [KUBERNETES_SERVICE_IP],
      sessionAffinity: 'None',
      ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }],
    },
  };
}

export async function ensureKubernetesService(env: ControllerEnv, port: number): Promise<void> {
  const objects = new Objects(env, 'kube-apiserver', 'system:apiserver');
  if (objects.get(SERVICES, DEFAULT_NAMESPACE, KUBERNETES_SERVICE)) return;
  try {
    if (await objects.create(SERVICES, DEFAULT_NAMESPACE, kubernetesService(port))) env.log.info('created the kubernetes service', { port });
  } catch (e) {
    // A data directory from before this Service existed may have given its address to another
    // Service: take any free address then, rather than not starting.
    if (!(e instanceof StatusError) || e.status.reason !== 'Invalid') throw e;
    env.log.warn(`the kubernetes service cannot have ${KUBERNETES_SERVICE_IP}; it gets another address`, { error: e.message });
    const svc = kubernetesService(port);
    const spec = svc.spec as Obj;
    delete spec.clusterIP;
    delete spec.clusterIPs;
    await objects.create(SERVICES, DEFAULT_NAMESPACE, svc);
  }
}

/** What the Endpoints and slices hold for a set of addresses (pure: unit-tested). */
export function endpointsFor(addresses: readonly ApiAddress[]): { subsets: Obj[]; slices: Array<{ name: string; port: number; endpoints: Obj[] }>; primaryPort: number | undefined } {
  const byPort = new Map<number, string[]>();
  for (const a of addresses) {
    const ips = byPort.get(a.port) ?? [];
    if (!ips.includes(a.ip)) ips.push(a.ip);
    byPort.set(a.port, ips);
  }
  for (const ips of byPort.values()) ips.sort();
  // The port most replicas serve on (the lowest on a tie) is the Service's target port and
  // the `kubernetes` slice's.
  const ports = [...byPort.keys()].sort((a, b) => byPort.get(b)!.length - byPort.get(a)!.length || a - b);
  const primaryPort = ports[0];
  const port = (p: number) => [{ name: 'https', port: p, protocol: 'TCP' }];
  const subsets = [...byPort.keys()].sort((a, b) => a - b).map((p) => ({ addresses: byPort.get(p)!.map((ip) => ({ ip })), ports: port(p) }));
  const slices = ports.map((p) => ({
    name: p === primaryPort ? KUBERNETES_SERVICE : `${KUBERNETES_SERVICE}-${p}`,
    port: p,
    endpoints: byPort.get(p)!.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  }));
  return { subsets, slices, primaryPort };
}

/** This replica's Lease, renewed until stopped. Runs on every replica (not leader-only). */
export class EndpointLease {
  private timer: NodeJS.Timeout | undefined;
  private readonly objects: Objects;
  private stopped = false;

  constructor(
    private readonly env: ControllerEnv,
    private readonly replica: string,
    private readonly address: () => Promise<ApiAddress | undefined>,
    private readonly ttlSeconds = 15,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.objects = new Objects(env, 'kube-apiserver', 'system:apiserver');
  }

  get name(): string {
    return `${LEASE_PREFIX}${this.replica}`;
  }

  start(): void {
    this.stopped = false;
    const tick = async (): Promise<void> => {
      let delay = Math.max(1000, (this.ttlSeconds * 1000) / 1.5);
      try {
        await this.renew();
      } catch (e) {
        delay = 1000;
        this.env.log.debug('renewing the API endpoint lease failed; retrying', { error: e instanceof Error ? e.message : String(e) });
      }
      if (!this.stopped) {
        this.timer = setTimeout(() => void tick(), delay);
        this.timer.unref();
      }
    };
    void tick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Deletes this replica's lease (graceful shutdown), giving up after `timeoutMs` (no quorum). */
  async release(timeoutMs = 2000): Promise<void> {
    this.stop();
    const current = this.objects.get(LEASES, SYSTEM_NAMESPACE, this.name);
    if (!current) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([this.objects.delete(LEASES, SYSTEM_NAMESPACE, this.name, metaOf(current).uid), timeout]).finally(() => clearTimeout(timer));
  }

  async renew(): Promise<void> {
    const addr = await this.address();
    // Released meanwhile (shutting down): a late renewal must not bring the lease back.
    if (!addr || this.stopped) return;
    const annotations = { [addressAnnotation(this.env.naming)]: `${addr.ip.includes(':') ? `[${addr.ip}]` : addr.ip}:${addr.port}` };
    const spec = { holderIdentity: this.replica, leaseDurationSeconds: this.ttlSeconds, renewTime: microTime(this.now()) };
    const current = this.objects.get(LEASES, SYSTEM_NAMESPACE, this.name);
    if (!current) {
      const created = await this.objects.create(LEASES, SYSTEM_NAMESPACE, { apiVersion: `${this.env.naming.group('coordination.k8s.io')}/v1`, kind: 'Lease', metadata: { name: this.name, namespace: SYSTEM_NAMESPACE, annotations }, spec });
      if (created) return;
      // Created meanwhile (or the cache is behind): the next tick updates it.
      throw new Error('lease exists but is not in the cache yet');
    }
    const m = metaOf(current);
    await this.objects.update(LEASES, SYSTEM_NAMESPACE, { ...current, metadata: { ...m, annotations: { ...(m.annotations ?? {}), ...annotations } }, spec: { ...((current.spec as Obj | undefined) ?? {}), ...spec } });
  }
}

/** Parses `ip:port` or `[ip6]:port`. */
export function parseAddress(s: string | undefined): ApiAddress | undefined {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(s ?? '');
  if (!m || !isIP(m[1]!)) return undefined;
  return { ip: m[1]!, port: Number(m[2]) };
}

/** The IP an advertised host stands for (a DNS name is resolved; a wildcard is loopback). */
export async function advertisedIp(host: string): Promise<string | undefined> {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  if (isIP(host)) return host;
  try {
    return (await lookup(host)).address;
  } catch {
    return undefined;
  }
}

/** The leader-only controller: Leases → Endpoints, EndpointSlices and the Service's target port. */
export function kubernetesEndpointsController(env: ControllerEnv, now: () => Date = () => new Date()): Reconciler {
  const objects = new Objects(env, 'kube-apiserver', 'system:apiserver');
  const naming = env.naming;
  const labels = sliceLabels(naming);
  const serviceNameLabel = naming.label('service-name');
  const key = (ns: string, match: (name: string) => boolean) => (_t: string, e: { namespace: string; name: string }) => (e.namespace === ns && match(e.name) ? ['endpoints'] : []);
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return new Reconciler(
    {
      name: 'kubernetes-endpoints',
      sources: [
        { prefix: objects.prefix(LEASES), keys: key(SYSTEM_NAMESPACE, (n) => n.startsWith(LEASE_PREFIX)) },
        { prefix: objects.prefix(ENDPOINTS), keys: key(DEFAULT_NAMESPACE, (n) => n === KUBERNETES_SERVICE) },
        { prefix: objects.prefix(SLICES), keys: key(DEFAULT_NAMESPACE, (n) => n.startsWith(KUBERNETES_SERVICE)) },
        { prefix: objects.prefix(SERVICES), keys: key(DEFAULT_NAMESPACE, (n) => n === KUBERNETES_SERVICE) },
      ],
      async reconcile() {
        const t = now().getTime();
        const live: ApiAddress[] = [];
        let nextExpiry = Infinity;
        for (const lease of objects.list(LEASES, SYSTEM_NAMESPACE)) {
          const m = metaOf(lease);
          if (!m.name?.startsWith(LEASE_PREFIX)) continue;
          const spec = (lease.spec ?? {}) as { renewTime?: string; leaseDurationSeconds?: number };
          const expires = Date.parse(spec.renewTime ?? '') + (spec.leaseDurationSeconds ?? 0) * 1000;
          const addr = parseAddress(m.annotations?.[addressAnnotation(naming)]);
          if (!(expires > t)) {
            env.log.info('API endpoint lease expired: removing it', { lease: m.name });
            await objects.delete(LEASES, SYSTEM_NAMESPACE, m.name, m.uid);
            continue;
          }
          if (!addr) continue;
          live.push(addr);
          nextExpiry = Math.min(nextExpiry, expires);
        }
        const want = endpointsFor(live);

        const service = objects.get(SERVICES, DEFAULT_NAMESPACE, KUBERNETES_SERVICE);
        if (service && want.primaryPort !== undefined) {
          const spec = (service.spec ?? {}) as { ports?: Obj[] };
          const ports = spec.ports ?? [];
          const https = ports.find((p) => p.name === 'https');
          if (https && https.targetPort !== want.primaryPort) {
            await objects.update(SERVICES, DEFAULT_NAMESPACE, { ...service, spec: { ...spec, ports: ports.map((p) => (p === https ? { ...p, targetPort: want.primaryPort } : p)) } });
          }
        }

        const endpointsLabels = { [`${naming.labelPrefix('endpointslice')}skip-mirror`]: 'true' };
        const endpoints = objects.get(ENDPOINTS, DEFAULT_NAMESPACE, KUBERNETES_SERVICE);
        if (!endpoints) {
          await objects.create(ENDPOINTS, DEFAULT_NAMESPACE, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: KUBERNETES_SERVICE, namespace: DEFAULT_NAMESPACE, labels: endpointsLabels }, subsets: want.subsets });
        } else if (!same(endpoints.subsets ?? [], want.subsets) || !same(metaOf(endpoints).labels ?? {}, { ...(metaOf(endpoints).labels ?? {}), ...endpointsLabels })) {
          const m = metaOf(endpoints);
          await objects.update(ENDPOINTS, DEFAULT_NAMESPACE, { ...endpoints, metadata: { ...m, labels: { ...(m.labels ?? {}), ...endpointsLabels } }, subsets: want.subsets });
        }

        const sliceGroup = `${naming.group('discovery.k8s.io')}/v1`;
        const wanted = new Set<string>();
        // With no live lease the `kubernetes` slice stays, empty, as the Endpoints do.
        const slices = want.slices.length > 0 ? want.slices : [{ name: KUBERNETES_SERVICE, port: undefined, endpoints: [] as Obj[] }];
        for (const s of slices) {
          wanted.add(s.name);
          const body = { addressType: 'IPv4', endpoints: s.endpoints, ports: s.port === undefined ? [] : [{ name: 'https', port: s.port, protocol: 'TCP' }] };
          if (live.some((a) => a.port === s.port && a.ip.includes(':'))) body.addressType = 'IPv6';
          const current = objects.get(SLICES, DEFAULT_NAMESPACE, s.name);
          if (!current) {
            await objects.create(SLICES, DEFAULT_NAMESPACE, { apiVersion: sliceGroup, kind: 'EndpointSlice', metadata: { name: s.name, namespace: DEFAULT_NAMESPACE, labels }, ...body });
            continue;
          }
          const m = metaOf(current);
          const mergedLabels = { ...(m.labels ?? {}), ...labels };
          if (same(current.endpoints ?? [], body.endpoints) && same(current.ports ?? [], body.ports) && current.addressType === body.addressType && same(m.labels ?? {}, mergedLabels)) continue;
          await objects.update(SLICES, DEFAULT_NAMESPACE, { ...current, metadata: { ...m, labels: mergedLabels }, ...body });
        }
        for (const s of objects.list(SLICES, DEFAULT_NAMESPACE)) {
          const m = metaOf(s);
          if (m.labels?.[serviceNameLabel] === KUBERNETES_SERVICE && m.name?.startsWith(`${KUBERNETES_SERVICE}-`) && !wanted.has(m.name)) await objects.delete(SLICES, DEFAULT_NAMESPACE, m.name, m.uid);
        }
        if (nextExpiry !== Infinity) return Math.max(nextExpiry - t + 50, 50);
      },
    },
    env.cache,
    env.log,
  );
}
