// internal/admission/service-ips owns allocating what a Service needs from the cluster: a
// cluster IP from the service range (unless it is headless or an ExternalName) and node ports
// for NodePort and LoadBalancer services; a requested IP or port must be free. Used addresses
// come from the stored services, plus reservations made since (so concurrent creates in this
// process never get the same address; across replicas the registry's claims do that; a reservation ends after a minute, when its write is long
// stored or failed). A dry run reserves nothing, and a write that is not
// stored after all (failed validation, AlreadyExists, a lost race) gives its reservations back
// through `release`, as upstream's allocator transaction reverts. Imports: admission, apierrors.

import { errors } from '../apierrors/status.js';
import { fieldErrors } from '../apierrors/field-errors.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from './admission.js';

export interface ServiceAllocations {
  clusterIPs: Set<string>;
  nodePorts: Set<number>;
}

/** The addresses stored services hold (read from the watch cache when asked). */
export type UsedAddresses = () => ServiceAllocations;

const RANGE_BASE = (10 << 24) | (96 << 16); // 10.96.0.0/12
const RANGE_SIZE = 1 << 20;
const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;

const ipString = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
function ipNumber(s: string): number | undefined {
  const parts = s.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

/**
 * How long a reservation outlives its admission: a write is stored (and then counted from the
 * store) or released well within it (a proposal times out after 10 s). Without an end, a
 * service deleted before the next create would keep its address reserved until a restart.
 */
const RESERVATION_MS = 60_000;

/**
 * `random` picks where this process starts walking each range (upstream's allocators pick at
 * random too): replicas that allocate concurrently then rarely pick the same value, and when
 * they do, the claim in the replicated write (registry/claims.ts) lets only one commit.
 */
export function serviceAllocator(used: UsedAddresses, now: () => number = Date.now, random: () => number = Math.random): AdmissionPlugin {
  // Value: when the reservation was made.
  const reservedIPs = new Map<string, number>();
  const reservedPorts = new Map<number, number>();
  // What each admitted object reserved, so a write that is not stored can give it back.
  const heldBy = new WeakMap<object, { ips: string[]; ports: number[] }>();
  let nextIp = 10 + Math.floor(random() * (RANGE_SIZE - 11));
  let nextPort = NODE_PORT_MIN + Math.floor(random() * (NODE_PORT_MAX - NODE_PORT_MIN + 1));
  return {
    name: 'ServiceIPAllocation',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    release(req: AdmissionRequest): void {
      if (!req.object) return;
      const held = heldBy.get(req.object);
      if (!held) return;
      heldBy.delete(req.object);
      for (const ip of held.ips) reservedIPs.delete(ip);
      for (const port of held.ports) reservedPorts.delete(port);
    },
    admit(req: AdmissionRequest): void {
      if (req.resource.group !== '' || req.resource.resource !== 'services' || req.subresource || !req.object) return;
      const held = heldBy.get(req.object) ?? { ips: [], ports: [] };
      heldBy.set(req.object, held);
      // A dry run checks and picks addresses like a real write but holds none of them.
      const reserveIP = (ip: string): void => {
        if (req.dryRun) return;
        reservedIPs.set(ip, now());
        held.ips.push(ip);
      };
      const reservePort = (port: number): void => {
        if (req.dryRun) return;
        reservedPorts.set(port, now());
        held.ports.push(port);
      };
      const spec = (req.object.spec ?? {}) as JsonObject;
      const type = (spec.type as string | undefined) ?? 'ClusterIP';
      const current = used();
      // Reservations only bridge the time until the store has the service; then it counts itself.
      const expired = now() - RESERVATION_MS;
      for (const [ip, at] of reservedIPs) if (current.clusterIPs.has(ip) || at < expired) reservedIPs.delete(ip);
      for (const [port, at] of reservedPorts) if (current.nodePorts.has(port) || at < expired) reservedPorts.delete(port);
      const old = (req.oldObject?.spec ?? {}) as JsonObject;
      if (type !== 'ExternalName' && spec.clusterIP !== 'None') {
        const requested = typeof spec.clusterIP === 'string' && spec.clusterIP !== '' ? spec.clusterIP : undefined;
        if (requested && requested !== old.clusterIP) {
          const n = ipNumber(requested);
          if (n === undefined || ((n - RANGE_BASE) >>> 0) >= RANGE_SIZE) {
            throw errors.invalid({ group: '', name: 'Service' }, req.name, [fieldErrors.invalid('spec.clusterIPs', [requested], 'failed to allocate IP: the provided IP is not in the valid range 10.96.0.0/12')]);
          }
          if (current.clusterIPs.has(requested) || reservedIPs.has(requested)) {
            throw errors.invalid({ group: '', name: 'Service' }, req.name, [fieldErrors.invalid('spec.clusterIPs', [requested], `failed to allocate IP ${requested}: provided IP is already allocated`)]);
          }
          reserveIP(requested);
        } else if (!requested) {
          let ip = '';
          for (let tries = 0; tries < RANGE_SIZE; tries++) {
            const candidate = ipString(RANGE_BASE + nextIp);
            nextIp = nextIp + 1 >= RANGE_SIZE - 1 ? 10 : nextIp + 1;
            if (!current.clusterIPs.has(candidate) && !reservedIPs.has(candidate)) {
              ip = candidate;
              break;
            }
          }
          if (!ip) throw errors.internal('failed to allocate a service IP: the range is full');
          reserveIP(ip);
          spec.clusterIP = ip;
          spec.clusterIPs = [ip];
        }
        if (spec.clusterIP && !Array.isArray(spec.clusterIPs)) spec.clusterIPs = [spec.clusterIP];
      }
      if (type === 'NodePort' || type === 'LoadBalancer') {
        const ports = Array.isArray(spec.ports) ? (spec.ports as JsonObject[]) : [];
        const oldPorts = new Set(((old.ports ?? []) as JsonObject[]).map((p) => p.nodePort).filter((p): p is number => typeof p === 'number'));
        ports.forEach((p, i) => {
          if (typeof p.nodePort === 'number' && p.nodePort !== 0) {
            if (oldPorts.has(p.nodePort)) return;
            if (p.nodePort < NODE_PORT_MIN || p.nodePort > NODE_PORT_MAX) {
              throw errors.invalid({ group: '', name: 'Service' }, req.name, [fieldErrors.invalid(`spec.ports[${i}].nodePort`, p.nodePort, `provided port is not in the valid range. The range of valid ports is ${NODE_PORT_MIN}-${NODE_PORT_MAX}`)]);
            }
            if (current.nodePorts.has(p.nodePort) || reservedPorts.has(p.nodePort)) {
              throw errors.invalid({ group: '', name: 'Service' }, req.name, [fieldErrors.invalid(`spec.ports[${i}].nodePort`, p.nodePort, 'provided port is already allocated')]);
            }
            reservePort(p.nodePort);
            return;
          }
          for (let tries = 0; tries <= NODE_PORT_MAX - NODE_PORT_MIN; tries++) {
            const candidate = nextPort;
            nextPort = nextPort >= NODE_PORT_MAX ? NODE_PORT_MIN : nextPort + 1;
            if (!current.nodePorts.has(candidate) && !reservedPorts.has(candidate)) {
              reservePort(candidate);
              p.nodePort = candidate;
              return;
            }
          }
          throw errors.internal('failed to allocate a node port: the range is full');
        });
      }
    },
  };
}
