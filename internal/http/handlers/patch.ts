// internal/http/handlers/patch.ts owns PATCH (spec §4.9): choosing the patch by Content-Type
// (JSON patch, merge patch, strategic merge patch, server-side apply as YAML or, with the CBOR
// gate, CBOR), decoding the body, field validation of the result, If-Match, and handing the
// registry a function from the current object to the patched one (or an apply config; an
// apply on /scale hands over the Scale view too, so the apply runs on the Scale).
// Unsupported patch types are 415. Imports: apierrors, codec, patch, http, registry, validation.

import type { Context } from 'hono';
import { errors } from '../../apierrors/status.js';
import { decodeCbor, decodeJson, decodeYaml } from '../../codec/index.js';
import { queryBool } from '../../codec/query-params.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, builtinTypeNode, type JsonValue } from '../../patch/index.js';
import { requestBody, type Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { requestMediaType } from '../negotiation.js';
import { warningHeader } from '../respond.js';
import { chooseRepresentation, writeObject, writeStored } from '../representations.js';
import type { ResourceRequest } from './resource-request.js';
import { pruneUnknownFields } from '../../validation/schema.js';
import { applyScale, SCALE_SCHEMA, scaleOf } from './scale.js';

type JsonObject = Record<string, unknown>;

const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

function patchTypes(deps: HttpDeps): string[] {
  return deps.features.enabled('CBORServingAndStorage') ? [...PATCH_TYPES, 'application/apply-patch+cbor'] : PATCH_TYPES;
}

/** Reports duplicate and unknown fields per fieldValidation (400 under Strict, warnings under Warn). */
function fieldProblems(c: Context<Env>, rr: ResourceRequest, duplicates: string[], unknown: string[]): void {
  const problems = [...duplicates.map((d) => `duplicate field "${d.replace(/^\./, '')}"`), ...unknown.map((u) => `unknown field "${u.replace(/^\./, '')}"`)];
  if (problems.length === 0) return;
  if (rr.fieldValidation === 'Strict') throw errors.badRequest(`strict decoding error: ${problems.join(', ')}`);
  if (rr.fieldValidation === 'Warn') for (const p of problems) c.get('warnings').push(warningHeader(p));
}

export async function handlePatch(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const rep = chooseRepresentation(c, deps, rr.resource, 'write');
  const { mediaType } = requestMediaType(c.req.header('content-type'), patchTypes(deps));
  if (!patchTypes(deps).includes(mediaType)) throw errors.unsupportedMediaType(patchTypes(deps));
  // Strategic merge needs the patch strategies of a built-in schema; custom resources have none.
  if (mediaType === 'application/strategic-merge-patch+json' && rr.resource.custom) {
    throw errors.unsupportedMediaType(patchTypes(deps).filter((t) => t !== mediaType));
  }
  const bytes = await requestBody(c);
  if (bytes.length === 0) throw errors.badRequest('the patch body is empty');
  const ifMatch = c.req.header('if-match')?.replace(/^W\//, '').replace(/^"(.*)"$/, '$1') || undefined;
  const sub = rr.subresource?.name ?? '';
  const isScale = sub === 'scale';
  const name = rr.info.name;

  if (mediaType.startsWith('application/apply-patch+')) {
    if (!c.get('query').get('fieldManager')) {
      throw errors.badRequest('PATCH, application/apply-patch+yaml requires fieldManager to be specified');
    }
    const decoded = mediaType === 'application/apply-patch+cbor' ? decodeCbor(bytes) : decodeYaml(bytes);
    const config = decoded.value;
    if (typeof config !== 'object' || config === null || Array.isArray(config)) throw errors.badRequest('the apply body must be an object');
    const cfg = config as JsonObject;
    if (cfg.metadata === undefined || typeof cfg.metadata !== 'object' || cfg.metadata === null) {
      throw errors.badRequest('the apply body must be an object with metadata');
    }
    const meta = cfg.metadata as JsonObject;
    if (meta.managedFields !== undefined && meta.managedFields !== null) throw errors.badRequest('metadata.managedFields must be nil');
    if (meta.name !== undefined && meta.name !== name) {
      throw errors.badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
    }
    if (rr.resource.namespaced && meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== rr.namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const expected = isScale ? { apiVersion: `${rr.subresource!.group}/${rr.subresource!.version}`, kind: 'Scale' } : { apiVersion: rr.resource.apiVersion, kind: rr.resource.kind };
    if (cfg.apiVersion !== expected.apiVersion || cfg.kind !== expected.kind) {
      throw errors.badRequest(`the apply body is ${String(cfg.kind)} in ${String(cfg.apiVersion)}, but this endpoint expects ${expected.kind} in ${expected.apiVersion}`);
    }
    // A Scale body is checked against the Scale's schema, as an applied workload is against its own.
    const unknown = isScale ? pruneUnknownFields(SCALE_SCHEMA, cfg, { naming: deps.naming }) : rr.registry.unknownFields(rr.resource, cfg, sub);
    fieldProblems(c, rr, decoded.duplicateFields, unknown);
    const force = queryBool(c.get('query').get('force')) === true;
    if (isScale) {
      // The apply runs on the Scale view of the workload; the answer is the Scale written.
      const scale = { toScale: (w: JsonObject) => scaleOf(rr.resource, w, deps.naming), fromScale: (w: JsonObject, s: JsonObject) => applyScale(rr.resource, w, s) };
      const { object } = await rr.registry.patch(rr.resource, rr.ctx, name, sub, { apply: cfg, force, scale }, ifMatch);
      return writeObject(c, deps, rep, rr.resource, scaleOf(rr.resource, object, deps.naming), 200, SCALE_SCHEMA);
    }
    const { object, created } = await rr.registry.patch(rr.resource, rr.ctx, name, sub, { apply: cfg, force }, ifMatch);
    return writeObject(c, deps, rep, rr.resource, object, created ? 201 : 200);
  }

  if (c.get('query').has('force')) throw errors.badRequest('force: Forbidden: may not be specified for non-apply patch');
  const decoded = decodeJson(bytes);
  const body = decoded.value;
  let build: (current: JsonObject) => JsonObject;
  const patchOne = (doc: JsonObject): JsonObject => {
    switch (mediaType) {
      case 'application/json-patch+json':
        return applyJsonPatch(doc as JsonValue, body) as JsonObject;
      case 'application/merge-patch+json':
        return applyMergePatch(doc as JsonValue, body) as JsonObject;
      default: {
        const schemaName = isScale ? SCALE_SCHEMA : rr.resource.schemaName;
        return applyStrategicMergePatch(doc as JsonValue, body, schemaName ? builtinTypeNode(schemaName) : undefined) as JsonObject;
      }
    }
  };
  if (isScale) {
    // A scale patch is computed on the Scale view, then written back as spec.replicas.
    build = (current) => applyScale(rr.resource, current, patchOne(scaleOf(rr.resource, current, deps.naming)));
  } else {
    build = (current) => {
      const patched = patchOne(current);
      if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) throw errors.badRequest('the patched object is not an object');
      fieldProblems(c, rr, [], rr.registry.unknownFields(rr.resource, patched, sub));
      return patched;
    };
  }
  fieldProblems(c, rr, decoded.duplicateFields, []);
  const { object } = await rr.registry.patch(rr.resource, rr.ctx, name, sub, { build }, ifMatch);
  if (isScale) return writeObject(c, deps, rep, rr.resource, scaleOf(rr.resource, object, deps.naming), 200, SCALE_SCHEMA);
  return writeStored(c, deps, rep, rr.resource, rr.registry, rr.namespace, object, 200, rr.ctx.dryRun);
}
