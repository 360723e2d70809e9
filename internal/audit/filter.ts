// internal/audit/filter owns auditing in the handler chain, in two filters placed as upstream
// places WithAuditInit and WithAudit:
//   withAuditInit (before authentication): the audit ID (the client's Audit-ID header or a new
//     UUID), returned as the Audit-Id response header; the receive time; and the event of a
//     request whose authentication failed (401, stage ResponseStarted, as upstream logs it);
//   withAudit (after authentication, before impersonation): the policy decision for the
//     authenticated user, then RequestReceived; after the handler, ResponseStarted and
//     ResponseComplete of long-running requests (watch: when the stream closes), ResponseComplete
//     of the others, Panic for an unexpected error.
// Bodies: the request body is kept when the handler reads it (http/context's requestBody asks
// RequestAudit) and logged at Request and above, as JSON; the response body (JSON, YAML, gzipped,
// protobuf or CBOR of one object; not streamed ones) at RequestResponse; managedFields removed
// when the policy says so. Other modules add annotations through auditAnnotate / RequestAudit.
// Imports: hono, apierrors, auth/user, http (context, deps types, respond), audit/*, js-yaml.

import { gunzipSync } from 'node:zlib';
import type { Context, MiddlewareHandler } from 'hono';
import { load as loadYaml } from 'js-yaml';
import { errors, isStatusError } from '../apierrors/status.js';
import type { UserInfo } from '../auth/user.js';
import type { Env } from '../http/context.js';
import type { HttpDeps } from '../http/deps.js';
import { errorResponse } from '../http/respond.js';
import type { Auditor } from './auditor.js';
import { formatEvent, microTime, newAuditID, sourceIPs, userJson, withoutManagedFields, type EventCore, type ObjectRef, type ResponseStatus } from './event.js';
import { levelRank, type AuditDecision, type Stage } from './policy.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Sub-resources that hold a connection open, as upstream's long-running check counts them. */
const LONG_RUNNING_SUBRESOURCES = new Set(['proxy', 'attach', 'exec', 'log', 'portforward']);

/** The part of Node's HTTP/1.1 and HTTP/2 compatibility responses auditing uses. */
interface NodeResponse {
  setHeader(name: string, value: string): unknown;
  readonly headersSent: boolean;
  readonly statusCode: number;
  once(event: 'close', listener: () => void): unknown;
}

/** What auditing knows about one request; set on the context as `audit` while the request is audited. */
export class RequestAudit {
  readonly received = microTime();
  /** Set once the policy gives the request a level above None. */
  core: EventCore | undefined;
  decision: AuditDecision | undefined;
  /** The request body, once the handler reads it (http/context.requestBody). */
  requestBody: Promise<Buffer> | undefined;
  private annotations: Record<string, string> | undefined;

  constructor(
    readonly auditor: Auditor,
    readonly id: string,
  ) {}

  annotate(key: string, value: string): void {
    // Upstream keeps the first value of a key.
    (this.annotations ??= {})[key] ??= value;
    if (this.core) this.core.annotations = this.annotations;
  }

  /** The authorizer's decision, as upstream's authorization annotations. */
  authorized(allowed: boolean, reason: string): void {
    this.annotate(this.auditor.keys.decision, allowed ? 'allow' : 'forbid');
    if (reason) this.annotate(this.auditor.keys.reason, reason);
  }

  /** A request to a deprecated API: spec §6 item 4 (and removed-release when one is planned). */
  deprecated(removedRelease: string | undefined): void {
    this.annotate(this.auditor.keys.deprecated, 'true');
    if (removedRelease) this.annotate(this.auditor.keys.removedRelease, removedRelease);
  }

  begin(core: EventCore, decision: AuditDecision): void {
    if (this.annotations) core.annotations = this.annotations;
    this.core = core;
    this.decision = decision;
  }

  /** Queues the stage's event unless the policy omits it. False when the event was dropped. */
  emit(stage: Stage): boolean | Promise<boolean> {
    if (!this.core || this.decision!.omitStages.has(stage)) return true;
    return this.auditor.backend.enqueue(formatEvent(this.core, stage, this.auditor.format));
  }
}

/** Adds an audit annotation to the request when it is audited (no-op otherwise). */
export function auditAnnotate(c: Context<Env>, key: string, value: string): void {
  c.get('audit')?.annotate(key, value);
}

const nodeResponse = (c: Context<Env>): NodeResponse | undefined => {
  const out = c.env?.outgoing as unknown as NodeResponse | undefined;
  return out && typeof out.setHeader === 'function' ? out : undefined;
};

export function withAuditInit(auditor: Auditor): MiddlewareHandler<Env> {
  return async (c, next) => {
    const id = c.req.header('audit-id') || newAuditID();
    const ra = new RequestAudit(auditor, id);
    c.set('audit', ra);
    const out = nodeResponse(c);
    // On the Node response, so streams written past hono (watch, large lists) carry it too.
    if (out) out.setHeader('Audit-Id', id);
    await next();
    if (!out) c.header('Audit-Id', id);
    if (c.get('user') !== undefined || ra.core) return;
    // Authentication failed: upstream audits these with the rules that match without a user.
    const info = c.get('info');
    const decision = auditor.decide({ user: undefined, verb: info.verb, isResourceRequest: info.isResourceRequest, path: info.path, namespace: info.namespace, apiGroup: info.apiGroup, resource: info.resource, subresource: info.subresource, name: info.name });
    if (decision.level === 'None') return;
    ra.begin(coreOf(c, ra, decision, undefined), decision);
    ra.core!.responseStatus = { metadata: {}, status: 'Failure', message: 'Authentication failed', reason: 'Unauthorized', code: c.res.status };
    await ra.emit('ResponseStarted');
  };
}

function requestURI(c: Context<Env>): string {
  const target = (c.env?.incoming as { url?: unknown } | undefined)?.url;
  if (typeof target === 'string' && target.startsWith('/')) return target;
  const u = new URL(c.req.url);
  return u.pathname + u.search;
}

function remoteAddress(c: Context<Env>): string | undefined {
  const incoming = c.env?.incoming as { socket?: { remoteAddress?: string }; stream?: { session?: { socket?: { remoteAddress?: string } } } } | undefined;
  return incoming?.socket?.remoteAddress ?? incoming?.stream?.session?.socket?.remoteAddress;
}

function coreOf(c: Context<Env>, ra: RequestAudit, decision: AuditDecision, user: UserInfo | undefined): EventCore {
  const info = c.get('info');
  const core: EventCore = {
    apiVersion: ra.auditor.apiVersion,
    level: decision.level,
    auditID: ra.id,
    requestURI: requestURI(c),
    verb: info.verb,
    user: userJson(user),
    sourceIPs: sourceIPs(c.req.header('x-forwarded-for'), c.req.header('x-real-ip'), remoteAddress(c)),
    userAgent: c.req.header('user-agent'),
    requestReceivedTimestamp: ra.received,
  };
  if (info.isResourceRequest) {
    const ref: ObjectRef = {};
    if (info.resource) ref.resource = info.resource;
    if (info.namespace) ref.namespace = info.namespace;
    if (info.name) ref.name = info.name;
    ref.apiGroup = info.apiGroup || undefined;
    ref.apiVersion = info.apiVersion;
    if (info.subresource) ref.subresource = info.subresource;
    core.objectRef = ref;
  }
  return core;
}

export function withAudit(auditor: Auditor, deps: Pick<HttpDeps, 'decoders' | 'catalog'>): MiddlewareHandler<Env> {
  return async (c, next) => {
    const ra = c.get('audit');
    if (!ra) return next();
    const info = c.get('info');
    const user = c.get('user');
    const decision = auditor.decide({ user, verb: info.verb, isResourceRequest: info.isResourceRequest, path: info.path, namespace: info.namespace, apiGroup: info.apiGroup, resource: info.resource, subresource: info.subresource, name: info.name });
    if (decision.level === 'None') {
      c.set('audit', undefined);
      return next();
    }
    ra.begin(coreOf(c, ra, decision, user), decision);
    const core = ra.core!;
    let queued = ra.emit('RequestReceived');
    if (queued !== true) queued = await queued;
    if (!queued && auditor.strict) {
      auditor.metrics.rejected.inc();
      return errorResponse(c, errors.internal('failed to store the audit event of this request'));
    }

    await next();

    const impersonated = c.get('user');
    if (impersonated !== user) core.impersonatedUser = userJson(impersonated);
    if (c.error && !isStatusError(c.error)) {
      core.responseStatus = { metadata: {}, status: 'Failure', message: `APIServer panic'd: ${c.error.message}`, reason: 'InternalError', code: 500 };
      await ra.emit('Panic');
      return;
    }
    await addRequestObject(c, ra, deps);
    const out = nodeResponse(c);
    if (out?.headersSent) {
      // Written past hono (a watch, a streamed list): the stream's end completes the request.
      core.responseStatus = { metadata: {}, code: out.statusCode };
      const longRunning = info.verb === 'watch' || LONG_RUNNING_SUBRESOURCES.has(info.subresource);
      if (longRunning) await ra.emit('ResponseStarted');
      out.once('close', () => void ra.emit('ResponseComplete'));
      return;
    }
    await addResponse(c, ra, deps);
    await ra.emit('ResponseComplete');
  };
}

/** The logged request body (Request and above) and what upstream fills into objectRef from it. */
async function addRequestObject(c: Context<Env>, ra: RequestAudit, deps: Pick<HttpDeps, 'decoders' | 'catalog'>): Promise<void> {
  const core = ra.core!;
  if (!ra.requestBody || !core.objectRef) return;
  let bytes: Buffer;
  try {
    bytes = await ra.requestBody;
  } catch {
    return; // the handler answered the read error (413, …)
  }
  if (bytes.length === 0) return;
  const info = c.get('info');
  const value = decodeBody(bytes, mediaTypeOf(c.req.header('content-type')), deps, info.apiGroup, info.apiVersion, info.resource);
  if (value === undefined) return;
  if (info.verb !== 'patch' && isObj(value) && isObj(value.metadata)) {
    const m = value.metadata;
    const ref = core.objectRef!;
    if (!ref.namespace && typeof m.namespace === 'string' && m.namespace) ref.namespace = m.namespace;
    if (!ref.name && typeof m.name === 'string' && m.name) ref.name = m.name;
    if (!ref.uid && typeof m.uid === 'string' && m.uid) ref.uid = m.uid;
    if (!ref.resourceVersion && typeof m.resourceVersion === 'string' && m.resourceVersion) ref.resourceVersion = m.resourceVersion;
  }
  if (levelRank(core.level) >= levelRank('Request')) core.requestObject = ra.decision!.omitManagedFields ? withoutManagedFields(value) : value;
}

const mediaTypeOf = (contentType: string | null | undefined): string => (contentType ?? '').split(';')[0]!.trim().toLowerCase();

/** A body as JSON-shaped data, decoded by its media type (JSON, YAML, protobuf, CBOR, patch types); undefined when it cannot be. */
function decodeBody(bytes: Buffer, contentType: string, deps: Pick<HttpDeps, 'decoders' | 'catalog'>, group: string, version: string, resource: string): unknown {
  try {
    const decoder = deps.decoders.get(contentType);
    if (decoder) return decoder(bytes, deps.catalog.resource(group, version, resource)?.schemaName).value;
    if (contentType.endsWith('json')) return JSON.parse(bytes.toString('utf8'));
    if (contentType.endsWith('yaml')) return loadYaml(bytes.toString('utf8'));
  } catch {
    // A body the handler refused is not logged as an object.
  }
  return undefined;
}

/** responseStatus (the Status of a failure, as upstream copies it) and, at RequestResponse, the response body. */
async function addResponse(c: Context<Env>, ra: RequestAudit, deps: Pick<HttpDeps, 'decoders' | 'catalog'>): Promise<void> {
  const core = ra.core!;
  const res = c.res;
  const status: ResponseStatus = { metadata: {}, code: res.status };
  core.responseStatus = status;
  const wantBody = core.level === 'RequestResponse' && core.objectRef !== undefined;
  if ((!wantBody && res.status < 300) || !res.body) return;
  let body: unknown;
  try {
    let bytes = Buffer.from(await res.clone().arrayBuffer());
    if (res.headers.get('content-encoding') === 'gzip') bytes = gunzipSync(bytes);
    const info = c.get('info');
    body = decodeBody(bytes, mediaTypeOf(res.headers.get('content-type')), deps, info.apiGroup, info.apiVersion, info.resource);
  } catch {
    return;
  }
  if (isObj(body) && body.kind === 'Status' && (body.apiVersion === 'v1' || body.apiVersion === undefined)) {
    if (typeof body.status === 'string') status.status = body.status;
    if (typeof body.message === 'string') status.message = body.message;
    if (typeof body.reason === 'string' && body.reason) status.reason = body.reason;
    if (body.details !== undefined) status.details = body.details;
  }
  if (wantBody && body !== undefined) core.responseObject = ra.decision!.omitManagedFields ? withoutManagedFields(body) : body;
}
