// internal/controllers/service-claims-repair owns keeping the store's Service address claims
// (registry/claims.ts: one key per cluster IP and node port, naming its owning Service's key)
// in step with the Services, as upstream's ClusterIP and NodePort repair controllers keep their
// allocation bitmaps. Leader-only; run at the start of leadership and then periodically. Each
// run reads the Services and the claims at one store revision and
//   (a) backfills the claims of a Service that holds a value nobody claims (Services stored
//       before claims existed): Warning event ClusterIPNotAllocated / PortNotAllocated;
//   (b) releases a claim whose owner is gone or no longer holds that value (a forced delete of
//       an unreadable Service cannot release its claims), or hands it to a Service that holds
//       the value when its owner does not;
//   (c) reports a value two Services hold (possible only for Services stored before claims):
//       Warning event ClusterIPAlreadyAllocated / PortAlreadyAllocated on the one without the
//       claim, and a log line, as upstream does. It changes neither Service.
// Every change is one transaction whose preconditions are the claim's and the Services'
// revisions as read, so a Service written meanwhile (by any replica) is never overruled: the
// change fails and the next run looks again. A claim whose owner cannot be decoded is left
// alone (what it holds is unknown). Events are written as core/v1 Events through the
// registries (serviceClaimsRepair). Imports: store types, registry (claims, keys),
// storedobject, log, controllers (objects, env type).

import { randomBytes } from 'node:crypto';
import type { Logger } from '../log/logger.js';
import { Objects } from './objects.js';
import type { ControllerEnv } from './serviceaccount-controllers.js';
import { CLAIMS_ROOT, claimKeys, describeClaim } from '../registry/claims.js';
import { resourcePrefix } from '../registry/keys.js';
import { decodeStored, type JsonObject } from '../storedobject/stored-object.js';
import type { RevisionStore } from '../store/types.js';

/** As upstream's repair loops (kube-apiserver runs both every 3 minutes): the claims only drift by rare events. */
export const CLAIMS_REPAIR_INTERVAL_MS = 3 * 60_000;

const SERVICES = { group: '', resource: 'services' };
const SERVICES_PREFIX = resourcePrefix({ upstreamGroup: '', resource: 'services' });

/** A Warning event the repair reports on a Service (the caller writes it as an Event object). */
export interface RepairEvent {
  service: { namespace: string; name: string; uid: string };
  reason: 'ClusterIPNotAllocated' | 'PortNotAllocated' | 'ClusterIPAlreadyAllocated' | 'PortAlreadyAllocated';
  message: string;
  /** upstream's reporting controller: ipallocator-repair-controller or portallocator-repair-controller. */
  component: string;
}

export interface ClaimsRepairReport {
  /** Claims written for the Services that hold their values. */
  backfilled: string[];
  /** Claims deleted: no Service holds them. */
  released: string[];
  /** Claims another Service also holds: `<claim key> <service key>`. */
  conflicts: string[];
}

interface ServiceState {
  key: string;
  modRevision: number;
  /** Undefined when the stored bytes do not decode. */
  obj: JsonObject | undefined;
  holds: Set<string>;
}

const ipFamily = (ip: string): string => (ip.includes(':') ? 'IPv6' : 'IPv4');

function wording(claim: string, kind: 'missing' | 'duplicate'): Pick<RepairEvent, 'reason' | 'message' | 'component'> | undefined {
  const c = describeClaim(claim);
  if (!c) return undefined;
  if (c.what === 'IP') {
    const ip = `[${ipFamily(String(c.value))}]:${c.value}`;
    return kind === 'missing'
      ? { reason: 'ClusterIPNotAllocated', message: `Cluster IP ${ip} is not allocated; repairing`, component: 'ipallocator-repair-controller' }
      : { reason: 'ClusterIPAlreadyAllocated', message: `Cluster IP ${ip} was assigned to multiple services; please recreate service`, component: 'ipallocator-repair-controller' };
  }
  return kind === 'missing'
    ? { reason: 'PortNotAllocated', message: `Port ${c.value} is not allocated; repairing`, component: 'portallocator-repair-controller' }
    : { reason: 'PortAlreadyAllocated', message: `Port ${c.value} was assigned to multiple services; please recreate service`, component: 'portallocator-repair-controller' };
}

export class ServiceClaimsRepair {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private generation = 0;
  /** Conflicts already reported (service uid + claim): reported once per leadership, not every run. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly store: RevisionStore,
    private readonly recordEvent: (e: RepairEvent) => Promise<void>,
    private readonly log: Logger,
    private readonly intervalMs = CLAIMS_REPAIR_INTERVAL_MS,
  ) {}

  start(): void {
    if (this.timer) return;
    const generation = ++this.generation;
    const run = () => {
      if (this.running || generation !== this.generation) return;
      this.running = this.repairOnce()
        .catch((e: unknown) => this.log.warn('service claims repair failed; retried at the next run', { error: e instanceof Error ? e.message : String(e) }))
        .finally(() => (this.running = undefined));
    };
    run();
    this.timer = setInterval(run, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.generation++;
    clearInterval(this.timer);
    this.timer = undefined;
    this.reported.clear();
  }

  /** One pass over every Service and claim (see the module header). */
  async repairOnce(): Promise<ClaimsRepairReport> {
    const report: ClaimsRepairReport = { backfilled: [], released: [], conflicts: [] };
    const revision = this.store.currentRevision();
    const [services, claimKvs] = await Promise.all([this.store.range(SERVICES_PREFIX, { revision }), this.store.range(CLAIMS_ROOT, { revision })]);
    const byKey = new Map<string, ServiceState>();
    for (const kv of services.kvs) {
      let obj: JsonObject | undefined;
      try {
        obj = decodeStored(kv.value, kv.modRevision);
      } catch {
        obj = undefined;
      }
      byKey.set(kv.key, { key: kv.key, modRevision: kv.modRevision, obj, holds: new Set(claimKeys(SERVICES, obj)) });
    }
    const claims = new Map<string, { owner: string; modRevision: number }>();
    for (const kv of claimKvs.kvs) claims.set(kv.key, { owner: Buffer.from(kv.value).toString('utf8'), modRevision: kv.modRevision });
    /** Whether the owner named by a claim still holds it (an undecodable owner is assumed to). */
    const ownerHolds = (claim: string, owner: ServiceState | undefined) => owner !== undefined && (owner.obj === undefined || owner.holds.has(claim));

    // (a) and (c): every value a Service holds is claimed by it, or reported.
    for (const svc of byKey.values()) {
      if (!svc.obj) continue;
      for (const claim of svc.holds) {
        const held = claims.get(claim);
        if (held?.owner === svc.key) continue;
        const owner = held && byKey.get(held.owner);
        if (held && ownerHolds(claim, owner)) {
          if (owner!.obj) await this.conflict(svc, claim, owner!.key, report);
          continue;
        }
        const compares = [
          { key: claim, modRevision: held?.modRevision ?? 0 },
          { key: svc.key, modRevision: svc.modRevision },
          ...(held ? [{ key: held.owner, modRevision: owner?.modRevision ?? 0 }] : []),
        ];
        const r = await this.store.execute({ type: 'txn', compares, ops: [{ type: 'put', key: claim, value: Buffer.from(svc.key) }] });
        if (!r.succeeded) continue;
        claims.set(claim, { owner: svc.key, modRevision: r.revision });
        report.backfilled.push(claim);
        this.log.warn('service claims repair: claimed a value its service held unclaimed', { claim, service: svc.key, ...(held ? { previousOwner: held.owner } : {}) });
        await this.report(svc, wording(claim, 'missing'));
      }
    }

    // (b): a claim nobody holds is released.
    for (const [claim, held] of claims) {
      const owner = byKey.get(held.owner);
      if (ownerHolds(claim, owner)) continue;
      const r = await this.store.execute({
        type: 'txn',
        compares: [{ key: claim, modRevision: held.modRevision }, { key: held.owner, modRevision: owner?.modRevision ?? 0 }],
        ops: [{ type: 'delete', key: claim }],
      });
      if (!r.succeeded) continue;
      report.released.push(claim);
      this.log.warn(`service claims repair: ${describeClaim(claim)?.what ?? 'value'} ${describeClaim(claim)?.value ?? claim} appears to have leaked: released`, { claim, owner: held.owner, ownerExists: owner !== undefined });
    }
    return report;
  }

  private async conflict(svc: ServiceState, claim: string, ownerKey: string, report: ClaimsRepairReport): Promise<void> {
    report.conflicts.push(`${claim} ${svc.key}`);
    const uid = String((svc.obj!.metadata as JsonObject | undefined)?.uid ?? svc.key);
    const once = `${uid}/${claim}`;
    if (this.reported.has(once)) return;
    this.reported.add(once);
    if (this.reported.size > 10_000) this.reported.delete(this.reported.values().next().value!);
    this.log.error('service claims repair: a value is held by two services; recreate one of them', { claim, service: svc.key, claimedBy: ownerKey });
    await this.report(svc, wording(claim, 'duplicate'));
  }

  private async report(svc: ServiceState, w: ReturnType<typeof wording>): Promise<void> {
    const meta = (svc.obj?.metadata ?? {}) as { namespace?: string; name?: string; uid?: string };
    if (!w || !meta.name) return;
    try {
      await this.recordEvent({ service: { namespace: meta.namespace ?? 'default', name: meta.name, uid: meta.uid ?? '' }, ...w });
    } catch (e) {
      this.log.warn('service claims repair: recording an event failed', { error: e instanceof Error ? e.message : String(e) });
    }
  }
}

/** The leader's repair controller over the server's store; its events go through the registries. */
export function serviceClaimsRepair(env: ControllerEnv, store: RevisionStore, intervalMs = CLAIMS_REPAIR_INTERVAL_MS): ServiceClaimsRepair {
  const objects = new Objects(env, 'service-claims-repair', 'system:apiserver');
  const record = async (e: RepairEvent): Promise<void> => {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const { namespace, name, uid } = e.service;
    await objects.create(['', 'v1', 'events'], namespace, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: { kind: 'Service', apiVersion: 'v1', name, namespace, uid },
      reason: e.reason,
      message: e.message,
      type: 'Warning',
      source: { component: e.component },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: e.component,
      reportingInstance: '',
    });
  };
  return new ServiceClaimsRepair(store, record, env.log, intervalMs);
}
