// internal/http/handlers/write-body owns reading the object of a POST or PUT: decode by
// Content-Type, check that kind, apiVersion, namespace and name agree with the URL (400
// otherwise), and apply fieldValidation to duplicate and unknown fields (drop with a
// warning, drop silently, or 400 listing them all). A built-in kind's JSON or YAML body must
// also decode into its Go type upstream: a value of the wrong JSON type is a 400 there, with
// encoding/json's message (validation/go-decode), before any strict-field or schema check.
// Imports: apierrors, http, registry, validation.

import type { Context } from 'hono';
import { errors } from '../../apierrors/status.js';
import { requestBody, type Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { goDecodeError } from '../../validation/go-decode.js';
import { decodeObjectBody } from '../body.js';
import { warningHeader } from '../respond.js';
import { META_SCHEMA } from '../representations.js';
import type { ResourceRequest } from './resource-request.js';

export type JsonObject = Record<string, unknown>;

const OBJECT_META_SCHEMA = `${META_SCHEMA}ObjectMeta`;

export interface ExpectedType {
  apiVersion: string;
  kind: string;
}

export async function readWriteBody(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest, expected: ExpectedType): Promise<JsonObject> {
  const bytes = await requestBody(c);
  const schemaName = rr.subresource?.name === 'scale' ? 'io.k8s.api.autoscaling.v1.Scale' : rr.subresource?.name === 'token' ? 'io.k8s.api.authentication.v1.TokenRequest' : rr.resource.schemaName;
  const { value, duplicateFields, mediaType } = decodeObjectBody(bytes, c.req.header('content-type'), deps.decoders, schemaName);
  const obj = value;
  // Like upstream's decoder, the endpoint's type fills in what the body leaves out; only a
  // disagreement is an error.
  if (obj.apiVersion === undefined || obj.apiVersion === '') obj.apiVersion = expected.apiVersion;
  if (obj.kind === undefined || obj.kind === '') obj.kind = expected.kind;
  if (obj.apiVersion !== expected.apiVersion || obj.kind !== expected.kind) {
    throw errors.badRequest(
      `the object provided is ${String(obj.kind)} in ${String(obj.apiVersion)}, but this endpoint expects ${expected.kind} in ${expected.apiVersion}`,
    );
  }
  // Upstream decodes custom resources as unstructured (their schema reports types as 422), and
  // protobuf and CBOR bodies carry their types, so only built-in JSON/YAML bodies are checked.
  // A custom resource's scale sub-resource takes an autoscaling/v1 Scale, a built-in type.
  if (schemaName && (!rr.resource.custom || rr.subresource?.name === 'scale') && (mediaType === 'application/json' || mediaType === 'application/yaml')) {
    const decodeError = goDecodeError(schemaName, obj, deps.naming);
    if (decodeError !== undefined) {
      // transformDecodeError: "<kind> in version <version> cannot be handled as a <kind>: <err>".
      const version = expected.apiVersion.slice(expected.apiVersion.indexOf('/') + 1);
      throw errors.badRequest(`${expected.kind} in version "${version}" cannot be handled as a ${expected.kind}: ${decodeError}`);
    }
  }
  // A custom resource is unstructured upstream, but its metadata is decoded into ObjectMeta
  // (apiextensions' GetObjectMetaWithOptions, malformed fields not dropped on requests): a
  // number label, a string of finalizers and the like are a 400 there, not stored.
  if (rr.resource.custom && rr.subresource?.name !== 'scale' && typeof obj.metadata === 'object' && obj.metadata !== null && !Array.isArray(obj.metadata)) {
    const decodeError = goDecodeError(OBJECT_META_SCHEMA, obj.metadata, deps.naming);
    if (decodeError !== undefined) {
      const version = expected.apiVersion.slice(expected.apiVersion.indexOf('/') + 1);
      throw errors.badRequest(`${expected.kind} in version "${version}" cannot be handled as a ${expected.kind}: ${decodeError}`);
    }
  }
  if (obj.metadata !== undefined && (typeof obj.metadata !== 'object' || obj.metadata === null || Array.isArray(obj.metadata))) {
    throw errors.badRequest('metadata must be an object');
  }
  const meta = (obj.metadata ?? {}) as JsonObject;
  if (rr.resource.namespaced && rr.namespace && meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== rr.namespace) {
    throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  if (!rr.resource.namespaced && meta.namespace !== undefined && meta.namespace !== '') {
    // Upstream clears a namespace set on a cluster-scoped object instead of failing.
    delete meta.namespace;
  }
  if (rr.info.name && meta.name !== undefined && meta.name !== rr.info.name) {
    throw errors.badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${rr.info.name})`);
  }
  applyFieldValidation(c, rr, duplicateFields.map((f) => ({ path: f, kind: 'duplicate' as const })), obj, deps);
  return obj;
}

function applyFieldValidation(
  c: Context<Env>,
  rr: ResourceRequest,
  duplicates: Array<{ path: string; kind: 'duplicate' }>,
  obj: JsonObject,
  deps: HttpDeps,
): void {
  void deps;
  const unknown = rr.registry.unknownFields(rr.resource, obj, rr.subresource?.name ?? '');
  const problems = [
    ...duplicates.map((d) => `duplicate field "${d.path.replace(/^\./, '')}"`),
    ...unknown.map((u) => `unknown field "${u.replace(/^\./, '')}"`),
  ];
  if (problems.length === 0) return;
  if (rr.fieldValidation === 'Strict') {
    throw errors.badRequest(`strict decoding error: ${problems.join(', ')}`);
  }
  if (rr.fieldValidation === 'Warn') for (const p of problems) c.get('warnings').push(warningHeader(p));
}
