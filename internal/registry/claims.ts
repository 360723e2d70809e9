// internal/registry/claims owns the store keys that make a value allocated to an object unique
// across the whole cluster, whichever replica allocated it: a Service's cluster IPs and node
// ports. Each claimed value is one key (`/claims/serviceips/<ip>`, `/claims/servicenodeports/
// <port>`) whose value names the owning object's key. The registry creates the keys of new
// claims in the same transaction as the object, each with a must-not-exist precondition, and
// deletes the keys an object gives up (by an update, or by being deleted) in the transaction
// that stores or removes it. Two replicas that allocate the same address concurrently from their
// own (lagging) watch caches therefore cannot both commit: the later transaction fails on the
// claim key and the registry allocates again. The keys live outside `/registry/` so that the
// watch cache and the API never see them. Imports: store (types only).

import type { Compare, Op } from '../store/types.js';

const UTF8 = new TextEncoder();

export const CLAIMS_ROOT = '/claims/';
const IP_PREFIX = `${CLAIMS_ROOT}serviceips/`;
const PORT_PREFIX = `${CLAIMS_ROOT}servicenodeports/`;

type Json = Record<string, unknown>;

/** Whether objects of this storage resource hold claims at all. */
export function hasClaims(resource: { group: string; resource: string }): boolean {
  return resource.group === '' && resource.resource === 'services';
}

/** The claim keys an object of storage resource `group/resource` holds (none for other kinds). */
export function claimKeys(resource: { group: string; resource: string }, obj: Json | undefined): string[] {
  if (!obj || !hasClaims(resource)) return [];
  const spec = (obj.spec ?? {}) as Json;
  const keys = new Set<string>();
  const ips = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [spec.clusterIP];
  for (const ip of ips) if (typeof ip === 'string' && ip !== '' && ip !== 'None') keys.add(IP_PREFIX + ip);
  for (const p of Array.isArray(spec.ports) ? (spec.ports as Json[]) : []) {
    if (typeof p?.nodePort === 'number' && p.nodePort > 0) keys.add(PORT_PREFIX + String(p.nodePort));
  }
  return [...keys];
}

/**
 * The compares and ops that move `objectKey`'s claims from `before` (the stored object, or none
 * for a create) to `after` (the object written, or none for a delete).
 */
export function claimChanges(objectKey: string, before: readonly string[], after: readonly string[]): { compares: Compare[]; ops: Op[] } {
  const compares: Compare[] = [];
  const ops: Op[] = [];
  // Most kinds claim nothing: no sets and no encoding (a TextEncoder made per write cost ~1% of a PUT).
  if (before.length === 0 && after.length === 0) return { compares, ops };
  const held = new Set(before);
  const kept = new Set(after);
  const owner = UTF8.encode(objectKey);
  for (const key of after) {
    if (held.has(key)) continue;
    compares.push({ key, modRevision: 0 });
    ops.push({ type: 'put', key, value: owner });
  }
  for (const key of before) if (!kept.has(key)) ops.push({ type: 'delete', key });
  return { compares, ops };
}

/** What a failed claim is, for the error that reports it: the field and the value. */
export function describeClaim(key: string): { field: string; value: string | number; what: string } | undefined {
  if (key.startsWith(IP_PREFIX)) return { field: 'spec.clusterIPs', value: key.slice(IP_PREFIX.length), what: 'IP' };
  if (key.startsWith(PORT_PREFIX)) return { field: 'spec.ports[*].nodePort', value: Number(key.slice(PORT_PREFIX.length)), what: 'port' };
  return undefined;
}
