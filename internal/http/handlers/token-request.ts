// internal/http/handlers/token-request owns the TokenRequest sub-resource
// (POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token, `kubectl create token`): it
// validates and defaults the request as upstream 1.32 does (audiences default to the API
// audiences, expirationSeconds to 3600, at least 600, at most 2^32 and shortened to
// --service-account-max-token-expiration), resolves the bound object (a Pod of this service
// account, a Secret or a Node; a uid given must match), and answers the signed token with its
// expiration. Nothing is stored. Imports: apierrors, auth (signer), http, registry.

import type { Context } from 'hono';
import { errors, isNotFound } from '../../apierrors/status.js';
import type { FieldError } from '../../apierrors/field-errors.js';
import type { ObjectRef } from '../../auth/serviceaccount-token.js';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { chooseRepresentation, writeObject } from '../representations.js';
import type { ResourceRequest } from './resource-request.js';
import { readWriteBody, type JsonObject } from './write-body.js';

export const TOKEN_REQUEST_SCHEMA = 'io.k8s.api.authentication.v1.TokenRequest';
const MIN_EXPIRATION_S = 600;
/** What kubelets request for projected tokens; such a pod-bound token may be extended. */
export const WARN_ONLY_EXPIRATION_S = 3607;
/** The lifetime of an extended token: a year. */
export const EXTENDED_EXPIRATION_S = 365 * 24 * 60 * 60;
const MAX_EXPIRATION_S = 2 ** 32;

const rec = (v: unknown): JsonObject | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

interface Loaded {
  ref: ObjectRef;
  obj: JsonObject;
}

export async function handleTokenRequest(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const tokens = deps.serviceAccountTokens;
  if (!tokens) throw errors.methodNotSupported({ group: rr.resource.group, name: 'serviceaccounts/token' }, c.req.method);
  const sub = rr.subresource!;
  const apiVersion = sub.group ? `${sub.group}/${sub.version}` : sub.version;
  const rep = chooseRepresentation(c, deps, rr.resource, 'write');
  const body = await readWriteBody(c, deps, rr, { apiVersion, kind: sub.kind });
  const name = rr.info.name;
  const namespace = rr.namespace;
  const authnGroup = sub.group;
  const spec = rec(body.spec) ?? {};
  const meta = rec(body.metadata) ?? {};
  if (str(meta.name) !== '' && str(meta.name) !== name) throw errors.badRequest(`name in URL does not match name in TokenRequest object`);
  if (str(meta.namespace) !== '' && str(meta.namespace) !== namespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');

  const audiences = Array.isArray(spec.audiences) && spec.audiences.length > 0 ? spec.audiences.map(str) : [...tokens.apiAudiences];
  let expirationSeconds = typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : 3600;
  const errs: FieldError[] = [];
  if (expirationSeconds < MIN_EXPIRATION_S) errs.push({ type: 'FieldValueInvalid', field: 'spec.expirationSeconds', value: expirationSeconds, detail: 'may not specify a duration less than 10 minutes' });
  if (expirationSeconds > MAX_EXPIRATION_S) errs.push({ type: 'FieldValueTooLong', field: 'spec.expirationSeconds', value: expirationSeconds, detail: 'may not specify a duration larger than 2^32 seconds' });
  if (errs.length) throw errors.invalid({ group: authnGroup, name: 'TokenRequest' }, name, errs);
  if (tokens.maxExpirationSeconds > 0 && expirationSeconds > tokens.maxExpirationSeconds) expirationSeconds = tokens.maxExpirationSeconds;

  const get = async (kind: 'serviceaccounts' | 'pods' | 'secrets' | 'nodes', ns: string, objName: string): Promise<Loaded> => {
    const r = deps.catalog.resource('', 'v1', kind)!;
    const entry = await deps.registries.for(r)!.getEntry(ns, objName);
    const obj = JSON.parse(entry.bytes.toString('utf8')) as JsonObject;
    return { obj, ref: { name: objName, uid: str(rec(obj.metadata)?.uid) } };
  };
  // Admission sees the TokenRequest before anything is read, as upstream's create handler
  // (NodeRestriction requires a node's token to be bound to a pod on that node).
  const admissionReq = { operation: 'CREATE' as const, resource: rr.resource, subresource: 'token', namespace, name, object: body, oldObject: undefined, user: rr.ctx.user, dryRun: rr.ctx.dryRun };
  await deps.registries.admission.mutate(admissionReq);
  await deps.registries.admission.validate(admissionReq);
  const sa = await get('serviceaccounts', namespace, name);

  let pod: ObjectRef | undefined;
  let secret: ObjectRef | undefined;
  let node: ObjectRef | undefined;
  const boundRef = rec(spec.boundObjectRef);
  let boundOut: JsonObject | undefined;
  if (boundRef) {
    const kind = str(boundRef.kind);
    const refApiVersion = str(boundRef.apiVersion);
    const refName = str(boundRef.name);
    const core = refApiVersion === 'v1' || refApiVersion === '';
    let loaded: Loaded;
    if (core && kind === 'Pod') {
      loaded = await get('pods', namespace, refName);
      if (str(rec(loaded.obj.spec)?.serviceAccountName || 'default') !== name) {
        throw errors.badRequest(`cannot bind token for serviceaccount "${name}" to pod running with different serviceaccount name.`);
      }
      pod = loaded.ref;
      const nodeName = str(rec(loaded.obj.spec)?.nodeName);
      if (nodeName) {
        try {
          node = (await get('nodes', '', nodeName)).ref;
        } catch (e) {
          if (!isNotFound(e)) throw e;
          // The pod's node is informational; an unregistered node leaves its uid out.
          node = { name: nodeName, uid: '' };
        }
      }
    } else if (core && kind === 'Secret') {
      loaded = await get('secrets', namespace, refName);
      secret = loaded.ref;
    } else if (core && kind === 'Node') {
      loaded = await get('nodes', '', refName);
      node = loaded.ref;
    } else {
      const gvk = refApiVersion ? `${refApiVersion}, Kind=${kind}` : `/, Kind=${kind}`;
      throw errors.badRequest(`cannot bind token for serviceaccount "${name}" to object of kind "${gvk}"`);
    }
    const uid = str(boundRef.uid);
    if (uid !== '' && uid !== loaded.ref.uid) {
      throw errors.conflict({ group: '', name: kind.toLowerCase() + 's' }, refName, `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    boundOut = { kind, apiVersion: refApiVersion || 'v1', name: refName, uid: loaded.ref.uid };
  }

  // Upstream's safe transition to bound tokens: a pod's token for the API itself, requested
  // for exactly 3607 s, stays valid a year; past 3607 s its use is counted and audited. The
  // answer reports the requested expiry, which is when a kubelet refreshes it.
  const extend = tokens.extendExpiration && pod !== undefined && expirationSeconds === WARN_ONLY_EXPIRATION_S && audiences.every((a) => tokens.apiAudiences.includes(a));
  const now = deps.now();
  const minted = await tokens.signer.mint(
    {
      namespace,
      serviceAccount: sa.ref,
      audiences,
      expirationSeconds: extend ? EXTENDED_EXPIRATION_S : expirationSeconds,
      ...(extend ? { warnAfterSeconds: expirationSeconds } : {}),
      ...(pod ? { pod } : {}),
      ...(secret ? { secret } : {}),
      ...(node ? { node } : {}),
    },
    now,
  );
  const expiration = new Date((Math.floor(now.getTime() / 1000) + expirationSeconds) * 1000);
  const answer: JsonObject = {
    kind: sub.kind,
    apiVersion,
    metadata: { name, namespace, creationTimestamp: null },
    spec: { audiences, expirationSeconds, boundObjectRef: boundOut ?? null },
    status: { token: minted.token, expirationTimestamp: expiration.toISOString().replace(/\.\d{3}Z$/, 'Z') },
  };
  return writeObject(c, deps, rep, rr.resource, answer, 201, TOKEN_REQUEST_SCHEMA);
}
