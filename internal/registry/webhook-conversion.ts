// internal/registry/webhook-conversion owns converting custom resources through their
// definition's conversion webhook (`spec.conversion.strategy: Webhook`): one ConversionReview
// (v1 or v1beta1, as the definition asks) per batch of objects not yet in the desired version,
// posted through the shared webhook call (webhook/client-config), and the reply checked as
// upstream's apiextensions-apiserver checks it: uid (v1), result status, object count,
// apiVersion, kind, name, namespace and uid of every object; of the metadata only labels and
// annotations are taken from the webhook. Every failure is upstream's 500 with the message
// `conversion webhook for <group>/<version>, Kind=<kind> …`.
// Imports: apierrors, validation/object-meta, webhook/client-config, auth/webhook-client (error
// type), naming, schema (types).

import { randomUUID } from 'node:crypto';
import { errors, type StatusError } from '../apierrors/status.js';
import { formatFieldError } from '../apierrors/field-errors.js';
import { validateAnnotations, validateLabels } from '../validation/object-meta.js';
import { WebhookCallError } from '../auth/webhook-client.js';
import type { Naming } from '../naming/naming.js';
import type { CustomResourceWebhookConversion } from '../schema/catalog.js';
import { callWebhook, type EndpointServiceResolver, type WebhookClientConfig } from '../webhook/client-config.js';

type JsonObject = Record<string, unknown>;

/** Upstream's fixed timeout for conversion webhooks (the CRD has no field for it). */
export const CONVERSION_WEBHOOK_TIMEOUT_MS = 30_000;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const metaOf = (o: JsonObject): JsonObject => (isObject(o.metadata) ? o.metadata : {});
const strOf = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Go's `%v` of a GroupVersionKind, as upstream's messages print it. */
const gvkOf = (o: JsonObject): string => `${strOf(o.apiVersion)}, Kind=${strOf(o.kind)}`;

/** The client config with upstream's `timeout` query parameter, which the URL in messages shows too. */
function withTimeoutParam(cc: CustomResourceWebhookConversion['clientConfig'], timeoutMs: number): WebhookClientConfig {
  const timeout = `timeout=${Math.ceil(timeoutMs / 1000)}s`;
  const addTo = (u: string): string => `${u}${u.includes('?') ? '&' : '?'}${timeout}`;
  if (cc.url !== undefined) return { ...cc, url: addTo(cc.url) };
  if (cc.service) {
    const path = cc.service.path ?? '/';
    return { ...cc, service: { ...cc.service, path: addTo(path.startsWith('/') ? path : `/${path}`) } };
  }
  return { ...cc };
}

/** How the webhook is named in call failures: its URL, as upstream's client errors show it. */
function describe(cc: WebhookClientConfig): string {
  if (cc.url !== undefined) return `Post "${cc.url}"`;
  const s = cc.service;
  return s ? `Post "https://${s.name}.${s.namespace}.svc:${s.port ?? 443}${s.path ?? '/'}"` : 'Post ""';
}

export class WebhookConverter {
  constructor(
    private readonly resolver: EndpointServiceResolver,
    private readonly naming: Naming,
    /** Upstream's 30 s; tests shorten it. */
    private readonly timeoutMs = CONVERSION_WEBHOOK_TIMEOUT_MS,
  ) {}

  /**
   * Converts `objs` to `desiredAPIVersion`: those already in it are kept as they are, the
   * others go to the webhook in one ConversionReview. `single`: the request was for one object
   * (upstream words failures for one object and for a list differently). Rejects with a 500
   * StatusError.
   */
  async convert(objs: readonly JsonObject[], desiredAPIVersion: string, conversion: CustomResourceWebhookConversion, single: boolean): Promise<JsonObject[]> {
    const indexes: number[] = [];
    objs.forEach((o, i) => {
      if (o.apiVersion !== desiredAPIVersion) indexes.push(i);
    });
    if (indexes.length === 0) return objs.slice();
    const sent = indexes.map((i) => objs[i]!);
    const about = gvkOf(sent[0]!);
    const fail = (reason: string): StatusError => errors.unknown(`conversion webhook for ${about} ${reason}`);
    const uid = randomUUID();
    const reviewApiVersion = `${this.naming.group('apiextensions.k8s.io')}/${conversion.reviewVersion}`;
    const review = { kind: 'ConversionReview', apiVersion: reviewApiVersion, request: { uid, desiredAPIVersion, objects: sent } };
    const config = withTimeoutParam(conversion.clientConfig, this.timeoutMs);
    let reply: unknown;
    try {
      reply = await callWebhook(config, JSON.stringify(review), this.resolver, { timeoutMs: this.timeoutMs, service: describe(config) });
    } catch (e) {
      throw fail(`failed: ${e instanceof WebhookCallError || e instanceof Error ? e.message : String(e)}`);
    }
    let converted: unknown[];
    try {
      converted = convertedObjectsOf(reply, conversion.reviewVersion, reviewApiVersion, uid);
    } catch (e) {
      throw fail(`failed: ${(e as Error).message}`);
    }
    if (converted.length !== sent.length) throw fail(`returned ${converted.length} objects, expected ${sent.length}`);
    const out = objs.slice();
    converted.forEach((c, n) => {
      const original = sent[n]!;
      const invalid = single ? 'returned invalid object' : `returned invalid converted object at index ${n}`;
      const invalidMeta = single ? 'returned invalid metadata' : `returned invalid metadata in object at index ${n}`;
      if (!isObject(c)) throw fail(`${invalid}: the converted object is not a JSON object`);
      if (typeof c.kind !== 'string' || c.kind === '') throw fail(`${invalid}: Object 'Kind' is missing`);
      if (c.apiVersion !== desiredAPIVersion) throw fail(`${invalid}: invalid groupVersion (expected ${desiredAPIVersion}, received ${strOf(c.apiVersion)})`);
      if (c.kind !== original.kind) throw fail(`${invalid}: invalid kind (expected ${strOf(original.kind)}, received ${c.kind})`);
      const before = metaOf(original);
      const after = metaOf(c);
      for (const [field, label] of [
        ['name', 'name'],
        ['namespace', 'namespace'],
        ['uid', 'UID'],
      ] as const) {
        const a = strOf(before[field]);
        const b = strOf(after[field]);
        if (a !== b) throw fail(`${invalid}: must have the same ${label}: ${a} != ${b}`);
      }
      out[indexes[n]!] = { ...c, metadata: restoredMeta(before, after, (m) => fail(`${invalidMeta}: ${m}`)) };
    });
    return out;
  }
}

/** The reply's convertedObjects, after the checks upstream makes of a reply of each review version. */
function convertedObjectsOf(reply: unknown, reviewVersion: 'v1' | 'v1beta1', reviewApiVersion: string, uid: string): unknown[] {
  const r = isObject(reply) ? reply : {};
  if (reviewVersion === 'v1') {
    // v1beta1 replies were never checked for kind and uid; upstream still does not check them.
    if (r.apiVersion !== reviewApiVersion || r.kind !== 'ConversionReview') {
      throw new Error(`expected webhook response of ${reviewApiVersion}, Kind=ConversionReview, got ${strOf(r.apiVersion)}, Kind=${strOf(r.kind)}`);
    }
  }
  if (!isObject(r.response)) throw new Error('no response provided');
  const response = r.response;
  if (reviewVersion === 'v1' && response.uid !== uid) throw new Error(`expected response.uid="${uid}", got "${strOf(response.uid)}"`);
  const result = isObject(response.result) ? response.result : {};
  if (result.status !== 'Success') {
    if (typeof result.message === 'string' && result.message !== '') throw new Error(result.message);
    throw new Error(`response.result.status was '${strOf(result.status)}', not 'Success'`);
  }
  return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
}

/** The original metadata with the webhook's labels and annotations (string maps), as upstream restores it. */
function restoredMeta(original: JsonObject, converted: JsonObject, fail: (message: string) => StatusError): JsonObject {
  const meta = structuredClone(original);
  for (const field of ['labels', 'annotations'] as const) {
    const v = converted[field];
    if (v === undefined || v === null) {
      delete meta[field];
      continue;
    }
    if (!isObject(v)) throw fail(`.metadata.${field} accessor error: ${JSON.stringify(v)} is of the type ${Array.isArray(v) ? '[]interface {}' : typeof v}, expected map[string]interface{}`);
    const errs = field === 'labels' ? validateLabels(v, 'metadata.labels') : validateAnnotations(v, 'metadata.annotations');
    if (errs.length > 0) {
      const messages = errs.map(formatFieldError);
      throw fail(messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`);
    }
    meta[field] = v;
  }
  return meta;
}
