// internal/admission/webhook/review owns the AdmissionReview exchanged with a webhook: the
// request filled as upstream fills it (uid, kind, resource, subResource, the request's own
// kind/resource/subResource, name, namespace, operation, userInfo, object, oldObject, dryRun,
// options as Create/Update/DeleteOptions), in `admission.k8s.io` (or the cluster naming's
// group) v1 or v1beta1, and the response checked as upstream checks it (apiVersion and kind,
// uid for v1, patch only from mutating webhooks and only as a JSONPatch).
// Imports: admission (types), schema/catalog (types), naming (types).

import type { Naming } from '../../naming/naming.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import type { AdmissionRequest, JsonObject } from '../admission.js';

export const SUPPORTED_REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;

/** The first of the webhook's admissionReviewVersions this server speaks, as upstream picks it. */
export function reviewVersionFor(versions: readonly string[]): 'v1' | 'v1beta1' | undefined {
  return versions.find((v): v is 'v1' | 'v1beta1' => (SUPPORTED_REVIEW_VERSIONS as readonly string[]).includes(v));
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** The kind of a request to `r` (the sub-resource's own kind for sub-resources that have one, e.g. Scale). */
export function kindOf(r: ResourceInfo, subresource: string): GroupVersionKind {
  const sub = subresource ? r.subresources.get(subresource) : undefined;
  if (sub && sub.kind && sub.kind !== r.kind) return { group: sub.group, version: sub.version, kind: sub.kind };
  return { group: r.group, version: r.version, kind: r.kind };
}

/** The request part of the review, without object and oldObject (match conditions see it as `request`). */
export function reviewRequest(uid: string, req: AdmissionRequest, resource: ResourceInfo, metaGroup: string): JsonObject {
  const isNamespace = req.resource.group === '' && req.resource.resource === 'namespaces';
  // Upstream's attributes carry a Namespace's own name as the namespace of requests on it.
  const namespace = isNamespace && req.name ? req.name : req.namespace;
  const user: JsonObject = { username: req.user.name };
  if (req.user.uid) user.uid = req.user.uid;
  if (req.user.groups.length) user.groups = [...req.user.groups];
  if (req.user.extra && Object.keys(req.user.extra).length) user.extra = req.user.extra;
  const out: JsonObject = {
    uid,
    kind: kindOf(resource, req.subresource),
    resource: { group: resource.group, version: resource.version, resource: resource.resource },
    ...(req.subresource ? { subResource: req.subresource } : {}),
    requestKind: kindOf(req.resource, req.subresource),
    requestResource: { group: req.resource.group, version: req.resource.version, resource: req.resource.resource },
    ...(req.subresource ? { requestSubResource: req.subresource } : {}),
    ...(req.name ? { name: req.name } : {}),
    ...(namespace ? { namespace } : {}),
    operation: req.operation,
    userInfo: user,
    dryRun: req.dryRun,
    options: optionsOf(req, metaGroup),
  };
  return out;
}

function optionsOf(req: AdmissionRequest, metaGroup: string): JsonObject | null {
  const apiVersion = `${metaGroup}/v1`;
  const dryRun = req.dryRun ? { dryRun: ['All'] } : {};
  const manager = req.fieldManager ? { fieldManager: req.fieldManager } : {};
  switch (req.operation) {
    case 'CREATE':
      return { kind: 'CreateOptions', apiVersion, ...dryRun, ...manager };
    case 'UPDATE':
      return { kind: 'UpdateOptions', apiVersion, ...dryRun, ...manager };
    case 'DELETE':
      return { ...(req.deleteOptions ?? {}), kind: 'DeleteOptions', apiVersion, ...dryRun };
    default:
      return null;
  }
}

export function reviewBody(version: 'v1' | 'v1beta1', admissionGroup: string, request: JsonObject, object: JsonObject | undefined, oldObject: JsonObject | undefined): string {
  return JSON.stringify({
    kind: 'AdmissionReview',
    apiVersion: `${admissionGroup}/${version}`,
    request: { ...request, object: object ?? null, oldObject: oldObject ?? null },
  });
}

export interface ReviewResponse {
  allowed: boolean;
  status?: JsonObject;
  /** Decoded patch operations (JSONPatch). */
  patch?: unknown;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** Thrown for a response upstream refuses: the dispatcher reports it as a failed call. */
export class InvalidResponseError extends Error {
  override name = 'InvalidResponseError';
}

/** Checks and decodes a webhook's reply to a review of `version` with `uid`. */
export function parseReviewResponse(body: unknown, version: 'v1' | 'v1beta1', admissionGroup: string, uid: string, mutating: boolean): ReviewResponse {
  const bad = (why: string) => new InvalidResponseError(`received invalid webhook response: ${why}`);
  const review = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as JsonObject) : undefined;
  const want = `${admissionGroup}/${version}`;
  if (!review || review.apiVersion !== want || review.kind !== 'AdmissionReview') {
    const got = review ? `${String(review.apiVersion ?? '')}, Kind=${String(review.kind ?? '')}` : '<none>';
    throw bad(`expected webhook response of ${want}, Kind=AdmissionReview, got ${got}`);
  }
  const r = review.response;
  if (r === null || typeof r !== 'object' || Array.isArray(r)) throw bad('webhook response was absent');
  const res = r as JsonObject;
  if (version === 'v1' && res.uid !== uid) throw bad(`expected response.uid="${uid}", got "${String(res.uid ?? '')}"`);
  const rawPatch = typeof res.patch === 'string' ? res.patch : '';
  let patch: unknown;
  if (rawPatch) {
    if (!mutating) throw bad('validating webhook may not return response.patch');
    if (version === 'v1') {
      if (res.patchType === undefined || res.patchType === null) throw bad('webhook returned response.patch but not response.patchType');
      if (res.patchType !== 'JSONPatch') throw bad(`webhook returned invalid response.patchType of "${String(res.patchType)}"`);
    } else if (res.patchType !== undefined && res.patchType !== null && res.patchType !== 'JSONPatch') {
      throw bad(`webhook returned invalid response.patchType of "${String(res.patchType)}"`);
    }
    try {
      patch = JSON.parse(Buffer.from(rawPatch, 'base64').toString('utf8'));
    } catch (e) {
      throw bad(`decoding response.patch: ${(e as Error).message}`);
    }
  } else if (version === 'v1' && res.patchType !== undefined && res.patchType !== null) {
    if (!mutating) throw bad('validating webhook may not return response.patchType');
  }
  const warnings = Array.isArray(res.warnings) ? res.warnings.filter((w): w is string => typeof w === 'string') : [];
  const annotations: Record<string, string> = {};
  const rawAnnotations = res.auditAnnotations;
  if (rawAnnotations && typeof rawAnnotations === 'object' && !Array.isArray(rawAnnotations)) {
    for (const [k, v] of Object.entries(rawAnnotations as JsonObject)) if (typeof v === 'string') annotations[k] = v;
  }
  const status = res.status && typeof res.status === 'object' && !Array.isArray(res.status) ? (res.status as JsonObject) : undefined;
  return { allowed: res.allowed === true, ...(status ? { status } : {}), ...(patch !== undefined ? { patch } : {}), warnings, auditAnnotations: annotations };
}

/** The admission.k8s.io group as the cluster's naming spells it. */
export function admissionGroup(naming: Naming): string {
  return naming.group('admission.k8s.io');
}
