// internal/audit/event owns the shape of one audit record: the audit.k8s.io/v1 Event (its
// group in the configured naming), built up over a request's stages by RequestAudit, and its
// two line formats (json: the Event as one JSON line; legacy: upstream's one-line text form).
// Also the small helpers the record needs: MicroTime timestamps, the request's source IPs,
// dropping managedFields from logged bodies. Imports: auth/user (types), audit/policy (types).

import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { UserInfo } from '../auth/user.js';
import type { AuditDecision, Level, Stage } from './policy.js';
import { levelRank } from './policy.js';

export interface UserJson {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ObjectRef {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

export type AuditFormat = 'json' | 'legacy';

/** `2026-11-25T21:00:00.123456Z` (metav1.MicroTime). */
export function microTime(): string {
  const t = performance.timeOrigin + performance.now();
  const ms = Math.floor(t);
  const micros = Math.min(999, Math.floor((t - ms) * 1000));
  return `${new Date(ms).toISOString().slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
}

export const newAuditID = (): string => randomUUID();

export function userJson(u: UserInfo | undefined): UserJson {
  if (!u) return {};
  const out: UserJson = { username: u.name };
  if (u.uid) out.uid = u.uid;
  if (u.groups.length) out.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length) out.extra = Object.fromEntries(Object.entries(u.extra).map(([k, v]) => [k, [...v]]));
  return out;
}

const unmapped = (ip: string): string => (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip);

/** X-Forwarded-For, then X-Real-Ip unless listed, then the peer unless it is the last one: upstream's order. */
export function sourceIPs(forwardedFor: string | undefined, realIp: string | undefined, remote: string | undefined): string[] {
  const ips: string[] = [];
  for (const part of (forwardedFor ?? '').split(',')) {
    const ip = part.trim();
    if (isIP(ip)) ips.push(ip);
  }
  const real = realIp?.trim();
  if (real && isIP(real) && !ips.includes(real)) ips.push(real);
  const peer = remote ? unmapped(remote) : undefined;
  if (peer && ips[ips.length - 1] !== peer) ips.push(peer);
  return ips;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy without metadata.managedFields (of the object, or of each item of a list). */
export function withoutManagedFields(v: unknown): unknown {
  if (!isObj(v)) return v;
  const strip = (o: unknown): unknown => {
    if (!isObj(o) || !isObj(o.metadata) || !('managedFields' in o.metadata)) return o;
    const { managedFields: _dropped, ...metadata } = o.metadata;
    return { ...o, metadata };
  };
  let out = strip(v) as Obj;
  if (Array.isArray(out.items)) out = { ...out, items: out.items.map(strip) };
  return out;
}

/** What one request's events share; each stage writes a copy with its own stage and time. */
export interface EventCore {
  apiVersion: string;
  level: Level;
  auditID: string;
  requestURI: string;
  verb: string;
  user: UserJson;
  impersonatedUser?: UserJson;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: ObjectRef;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  annotations?: Record<string, string>;
}

/** One line (without newline) for the stage, in upstream's field order. */
export function formatEvent(core: EventCore, stage: Stage, format: AuditFormat): string {
  const stageTimestamp = microTime();
  if (format === 'legacy') return legacyLine(core, stage);
  return JSON.stringify({
    kind: 'Event',
    apiVersion: core.apiVersion,
    level: core.level,
    auditID: core.auditID,
    stage,
    requestURI: core.requestURI,
    verb: core.verb,
    user: core.user,
    impersonatedUser: core.impersonatedUser,
    sourceIPs: core.sourceIPs.length ? core.sourceIPs : undefined,
    userAgent: core.userAgent || undefined,
    objectRef: core.objectRef,
    responseStatus: core.responseStatus,
    requestObject: levelRank(core.level) >= levelRank('Request') ? core.requestObject : undefined,
    responseObject: core.level === 'RequestResponse' ? core.responseObject : undefined,
    requestReceivedTimestamp: core.requestReceivedTimestamp,
    stageTimestamp,
    annotations: core.annotations && Object.keys(core.annotations).length ? core.annotations : undefined,
  });
}

const q = (s: string): string => JSON.stringify(s);

/** Upstream's legacy text line: `<time> AUDIT: id="…" stage="…" ip="…" method="…" user="…" …`. */
function legacyLine(e: EventCore, stage: Stage): string {
  const groups = e.user.groups?.length ? e.user.groups.map(q).join(',') : '<none>';
  const as = e.impersonatedUser?.username ?? '<self>';
  const asGroups = e.impersonatedUser ? (e.impersonatedUser.groups?.length ? e.impersonatedUser.groups.map(q).join(',') : '<none>') : '<lookup>';
  const response = e.responseStatus ? String(e.responseStatus.code) : '<deferred>';
  return (
    `${e.requestReceivedTimestamp} AUDIT: id=${q(e.auditID)} stage=${q(stage)} ip=${q(e.sourceIPs[0] ?? '<unknown>')} method=${q(e.verb)} ` +
    `user=${q(e.user.username ?? '<none>')} groups=${q(groups)} as=${q(as)} asgroups=${q(asGroups)} user-agent=${q(e.userAgent ?? '')} ` +
    `namespace=${q(e.objectRef?.namespace || '<none>')} uri=${q(e.requestURI)} response="${response}"`
  );
}

export type { AuditDecision };
