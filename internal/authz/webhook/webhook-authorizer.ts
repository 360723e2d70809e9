// internal/authz/webhook/webhook-authorizer owns the Webhook authorizer (upstream's
// plugin/pkg/authorizer/webhook, kube-apiserver 1.32): each question goes to a remote service
// as a SubjectAccessReview (v1, or v1beta1 where `groups` is spelled `group`) POSTed to the
// https server its kubeconfig names; `allowed` is allow, `denied` is deny, neither is no
// opinion, the reply's reason and evaluationError are passed on. Field and label selectors of
// the request travel parsed (`requirements`), with the operators upstream can express.
//
// Before the call, the CEL matchConditions are evaluated over `request` (the SubjectAccessReview
// v1 spec with every field present): any false skips the webhook (no opinion), an error with no
// false applies the failure policy. Answers are cached under the whole spec: allowed ones for
// authorizedTTL, the others for unauthorizedTTL, each only when its cache switch is on; failures
// are never cached. A call is retried as upstream's webhook client does (connection reset,
// HTTP 500, 504, 429 or a Retry-After header; 5 attempts, backoff from 500 ms × 1.5 with 20 %
// jitter), each attempt bounded by the timeout (≤ 30 s). A failed call, a non-2xx or malformed
// reply, or a reply of another apiVersion or kind, is the failure policy's decision: NoOpinion
// (counted as fail-open) or Deny, with the error as reason and evaluationError.
//
// The wire group is the naming's: `authorization.k8s.io` under --naming=kubernetes (what stock
// webhooks expect), `authorization.cluster.io` under --naming=cluster, as the token webhook and
// the spec's webhook payloads do. A webhook cannot list rules, so there is no rulesFor and
// SelfSubjectRulesReview reports itself incomplete.
// Imports: authz/authorizer, authz/webhook-config, auth/webhook-client, cel,
// cluster-cli/kubeconfig, log, naming, metrics.

import type { Registry } from 'prom-client';
import { WebhookCallError, postJson } from '../../auth/webhook-client.js';
import { celEnvironment, compileExpression, CelCompileError, type CompiledExpression } from '../../cel/cel.js';
import { readKubeconfig, type KubeconfigCredentials } from '../../cluster-cli/kubeconfig.js';
import type { Logger } from '../../log/logger.js';
import { BoundedMap } from '../../memo/bounded-map.js';
import type { Naming } from '../../naming/naming.js';
import type { FieldRequirement } from '../../selectors/field-selector.js';
import type { LabelRequirement } from '../../selectors/label-selector.js';
import type { Attributes, Authorizer, Decision } from '../authorizer.js';
import type { WebhookAuthorizerConfig } from '../webhook-config.js';
import { webhookMetrics, type WebhookMetrics, type WebhookResult } from './metrics.js';

export type { WebhookAuthorizerConfig } from '../webhook-config.js';

/** Upstream's limits: the timeout of structured configuration, the number of match conditions. */
export const MAX_TIMEOUT_MS = 30_000;
export const MAX_MATCH_CONDITIONS = 64;
/** Upstream's LRU size and the longest requester-controlled attributes still cached. */
const CACHE_ENTRIES = 8192;
const MAX_CACHED_ATTRIBUTE_BYTES = 10_000;

export interface RetryBackoff {
  initialMs: number;
  factor: number;
  jitter: number;
  /** Attempts in all (upstream's wait.Backoff Steps). */
  steps: number;
}

/** Upstream's DefaultRetryBackoff for authorization webhooks. */
export const DEFAULT_RETRY_BACKOFF: RetryBackoff = { initialMs: 500, factor: 1.5, jitter: 0.2, steps: 5 };

export interface WebhookAuthorizerDeps {
  registry?: Registry;
  log: Logger;
  /** The authorizer's name (AuthorizationConfiguration `name`; `webhook` for the flag form): metric label. */
  name: string;
  /** Selects the SubjectAccessReview group on the wire; upstream's `authorization.k8s.io` without. */
  naming?: Naming;
  /** Tests shorten it; the default is upstream's. */
  retryBackoff?: RetryBackoff;
  now?: () => number;
}

export class WebhookConfigError extends Error {
  override name = 'WebhookConfigError';
}

type Json = Record<string, unknown>;

interface ReviewStatus {
  allowed: boolean;
  denied: boolean;
  reason: string;
  evaluationError: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Field requirements as SubjectAccessReview carries them: `=` is In, `!=` NotIn. */
function fieldRequirements(reqs: readonly FieldRequirement[] | undefined): Json[] {
  return (reqs ?? []).map((r) => ({ key: r.field, operator: r.operator === '!=' ? 'NotIn' : 'In', values: [r.value] }));
}

const LABEL_OPERATORS: Partial<Record<LabelRequirement['operator'], string>> = {
  '=': 'In',
  '==': 'In',
  in: 'In',
  '!=': 'NotIn',
  notin: 'NotIn',
  exists: 'Exists',
  '!': 'DoesNotExist',
};

/** Label requirements; `gt`/`lt` have no SubjectAccessReview form and are left out (they only narrow). */
function labelRequirements(reqs: readonly LabelRequirement[] | undefined): Json[] {
  const out: Json[] = [];
  for (const r of reqs ?? []) {
    const operator = LABEL_OPERATORS[r.operator];
    if (!operator) continue;
    out.push({ key: r.key, operator, ...(r.values.length ? { values: [...r.values] } : {}) });
  }
  return out;
}

/** The v1 spec as upstream serialises it (empty fields omitted): the wire form and the cache key. */
export function subjectAccessReviewSpec(a: Attributes): Json {
  const spec: Json = {};
  const omitEmpty = (target: Json, key: string, value: string): void => {
    if (value) target[key] = value;
  };
  if (a.isResourceRequest) {
    const r: Json = {};
    omitEmpty(r, 'namespace', a.namespace);
    omitEmpty(r, 'verb', a.verb);
    omitEmpty(r, 'group', a.apiGroup);
    omitEmpty(r, 'version', a.apiVersion);
    omitEmpty(r, 'resource', a.resource);
    omitEmpty(r, 'subresource', a.subresource);
    omitEmpty(r, 'name', a.name);
    const fields = fieldRequirements(a.fieldSelector);
    if (fields.length) r['fieldSelector'] = { requirements: fields };
    const labels = labelRequirements(a.labelSelector);
    if (labels.length) r['labelSelector'] = { requirements: labels };
    spec['resourceAttributes'] = r;
  } else {
    const n: Json = {};
    omitEmpty(n, 'path', a.path);
    omitEmpty(n, 'verb', a.verb);
    spec['nonResourceAttributes'] = n;
  }
  omitEmpty(spec, 'user', a.user.name);
  if (a.user.groups.length) spec['groups'] = [...a.user.groups];
  if (a.user.extra && Object.keys(a.user.extra).length) spec['extra'] = a.user.extra;
  omitEmpty(spec, 'uid', a.user.uid ?? '');
  return spec;
}

/** What CEL sees as `request`: the v1 spec with every user and attribute field present. */
export function matchConditionRequest(spec: Json): Json {
  const out: Json = {
    user: str(spec['user']),
    groups: Array.isArray(spec['groups']) ? spec['groups'] : [],
    uid: str(spec['uid']),
    extra: (spec['extra'] as Json | undefined) ?? {},
  };
  const r = spec['resourceAttributes'] as Json | undefined;
  if (r) {
    const attrs: Json = {};
    for (const k of ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name']) attrs[k] = str(r[k]);
    if (r['fieldSelector']) attrs['fieldSelector'] = r['fieldSelector'];
    if (r['labelSelector']) attrs['labelSelector'] = r['labelSelector'];
    out['resourceAttributes'] = attrs;
  }
  const n = spec['nonResourceAttributes'] as Json | undefined;
  if (n) out['nonResourceAttributes'] = { verb: str(n['verb']), path: str(n['path']) };
  return out;
}

/** v1 → v1beta1: the one renamed field (`groups` → `group`). */
function toWireSpec(spec: Json, version: 'v1' | 'v1beta1'): Json {
  if (version === 'v1' || !('groups' in spec)) return spec;
  const { groups, ...rest } = spec;
  return { ...rest, group: groups };
}

function validate(cfg: WebhookAuthorizerConfig): void {
  if (!(cfg.timeoutMs > 0) || cfg.timeoutMs > MAX_TIMEOUT_MS) {
    throw new WebhookConfigError(`webhook.timeout: Invalid value: ${cfg.timeoutMs}ms: must be greater than 0 and at most ${MAX_TIMEOUT_MS / 1000}s`);
  }
  if (cfg.subjectAccessReviewVersion !== 'v1' && cfg.subjectAccessReviewVersion !== 'v1beta1') {
    throw new WebhookConfigError(`webhook.subjectAccessReviewVersion: Unsupported value: "${String(cfg.subjectAccessReviewVersion)}": supported values: "v1", "v1beta1"`);
  }
  if (cfg.failurePolicy !== 'NoOpinion' && cfg.failurePolicy !== 'Deny') {
    throw new WebhookConfigError(`webhook.failurePolicy: Unsupported value: "${String(cfg.failurePolicy)}": supported values: "Deny", "NoOpinion"`);
  }
  if (cfg.matchConditions.length > MAX_MATCH_CONDITIONS) {
    throw new WebhookConfigError(`webhook.matchConditions: Too many: ${cfg.matchConditions.length}: must have at most ${MAX_MATCH_CONDITIONS} items`);
  }
  const seen = new Set<string>();
  cfg.matchConditions.forEach((m, i) => {
    if (seen.has(m.expression)) throw new WebhookConfigError(`webhook.matchConditions[${i}].expression: Duplicate value: "${m.expression}"`);
    seen.add(m.expression);
  });
}

/** Match conditions see only `request` (a SubjectAccessReview v1 spec), as upstream's. */
const MATCH_CONDITION_ENV = celEnvironment({ request: 'map' });

function compileConditions(cfg: WebhookAuthorizerConfig): CompiledExpression[] {
  return cfg.matchConditions.map((m, i) => {
    try {
      return compileExpression(MATCH_CONDITION_ENV, m.expression, `webhook.matchConditions[${i}].expression`, ['bool']);
    } catch (e) {
      throw new WebhookConfigError(e instanceof CelCompileError ? e.message : String(e));
    }
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Builds the authorizer; an invalid configuration or unusable kubeconfig throws WebhookConfigError. */
export function createWebhookAuthorizer(cfg: WebhookAuthorizerConfig, deps: WebhookAuthorizerDeps): Authorizer {
  validate(cfg);
  const conditions = compileConditions(cfg);
  let target: KubeconfigCredentials;
  try {
    target = readKubeconfig(cfg.kubeConfigFile);
  } catch (e) {
    throw new WebhookConfigError(`webhook ${deps.name}: ${(e as Error).message}`);
  }
  const { name, log } = deps;
  const now = deps.now ?? Date.now;
  const backoff = deps.retryBackoff ?? DEFAULT_RETRY_BACKOFF;
  const metrics: WebhookMetrics = webhookMetrics(deps.registry);
  const apiVersion = `${deps.naming ? deps.naming.group('authorization.k8s.io') : 'authorization.k8s.io'}/${cfg.subjectAccessReviewVersion}`;
  const service = `authorization webhook "${name}"`;
  const cache = new BoundedMap<string, { status: ReviewStatus; expires: number }>(CACHE_ENTRIES);

  /** Upstream's CELMatcher: false wins over errors; errors only when nothing is false. */
  function match(spec: Json): { matches: true } | { matches: false } | { error: string } {
    if (conditions.length === 0) return { matches: true };
    const started = performance.now();
    const request = matchConditionRequest(spec);
    const errors: string[] = [];
    try {
      for (const c of conditions) {
        let value: unknown;
        try {
          value = c.run({ request });
        } catch (e) {
          errors.push(`cel evaluation error: expression '${c.source}' resulted in error: ${(e as Error).message}`);
          continue;
        }
        if (typeof value !== 'boolean') {
          errors.push(`cel evaluation error: expression '${c.source}' eval result type should be bool but got ${value === null ? 'null' : Array.isArray(value) ? 'list' : typeof value}`);
          continue;
        }
        if (!value) {
          metrics.matchConditionExclusion('Webhook', name);
          return { matches: false };
        }
      }
    } finally {
      metrics.matchConditionEvaluation('Webhook', name, (performance.now() - started) / 1000);
      if (errors.length) metrics.matchConditionError('Webhook', name);
    }
    return errors.length ? { error: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` } : { matches: true };
  }

  function onError(message: string): Decision {
    return { decision: cfg.failurePolicy === 'Deny' ? 'deny' : 'noOpinion', reason: message, evaluationError: message };
  }

  async function attempt(body: string): Promise<ReviewStatus> {
    const started = performance.now();
    let result: WebhookResult = 'success';
    try {
      const reply = await postJson(target, body, { timeoutMs: cfg.timeoutMs, service });
      const r = reply as { apiVersion?: unknown; kind?: unknown; status?: Json } | null;
      if (typeof r !== 'object' || r === null || Array.isArray(r) || r.apiVersion !== apiVersion || r.kind !== 'SubjectAccessReview') {
        const got = typeof r === 'object' && r !== null ? `${String(r.apiVersion)} ${String(r.kind)}` : typeof r;
        throw new WebhookCallError(`${service}: expected a SubjectAccessReview of ${apiVersion} in reply, got ${got}`, 'error', false);
      }
      const s = r.status && typeof r.status === 'object' ? r.status : {};
      return { allowed: s['allowed'] === true, denied: s['denied'] === true, reason: str(s['reason']), evaluationError: str(s['evaluationError']) };
    } catch (e) {
      result = e instanceof WebhookCallError ? e.kind : 'error';
      throw e;
    } finally {
      metrics.evaluation(name, result, (performance.now() - started) / 1000);
    }
  }

  /** Upstream's WithExponentialBackoff with DefaultShouldRetry. */
  async function call(spec: Json): Promise<ReviewStatus> {
    const body = JSON.stringify({ apiVersion, kind: 'SubjectAccessReview', metadata: { creationTimestamp: null }, spec: toWireSpec(spec, cfg.subjectAccessReviewVersion), status: { allowed: false } });
    let delay = backoff.initialMs;
    for (let step = 1; ; step++) {
      try {
        return await attempt(body);
      } catch (e) {
        if (!(e instanceof WebhookCallError) || !e.retryable || step >= backoff.steps) throw e;
      }
      await sleep(delay * (1 + Math.random() * backoff.jitter));
      delay *= backoff.factor;
    }
  }

  function cacheable(a: Attributes): boolean {
    const size = a.namespace.length + a.verb.length + a.apiGroup.length + a.apiVersion.length + a.resource.length + a.subresource.length + a.name.length + a.path.length;
    return size < MAX_CACHED_ATTRIBUTE_BYTES;
  }

  return {
    name,
    async authorize(a: Attributes): Promise<Decision> {
      const spec = subjectAccessReviewSpec(a);
      const m = match(spec);
      if ('error' in m) return onError(m.error);
      if (!m.matches) return { decision: 'noOpinion', reason: '' };

      const key = JSON.stringify(spec);
      let status: ReviewStatus;
      const hit = cache.get(key);
      if (hit && hit.expires > now()) {
        // Refresh its place: the least recently used entry is the one evicted.
        cache.delete(key);
        cache.set(key, hit);
        status = hit.status;
      } else {
        if (hit) cache.delete(key);
        try {
          status = await call(spec);
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e);
          log.warn('authorization webhook call failed', { webhook: name, error: message, failurePolicy: cfg.failurePolicy });
          if (cfg.failurePolicy === 'NoOpinion') metrics.failOpen(name, e instanceof WebhookCallError ? e.kind : 'error');
          return onError(message);
        }
        const ttl = status.allowed ? (cfg.cacheAuthorizedRequests ? cfg.authorizedTtlMs : 0) : cfg.cacheUnauthorizedRequests ? cfg.unauthorizedTtlMs : 0;
        if (ttl > 0 && cacheable(a)) {
          cache.set(key, { status, expires: now() + ttl });
        }
      }
      const extra = status.evaluationError ? { evaluationError: status.evaluationError } : {};
      if (status.allowed && status.denied) {
        return { decision: 'deny', reason: status.reason, evaluationError: 'webhook subject access review returned both allow and deny response' };
      }
      if (status.denied) return { decision: 'deny', reason: status.reason, ...extra };
      if (status.allowed) return { decision: 'allow', reason: status.reason, ...extra };
      return { decision: 'noOpinion', reason: status.reason, ...extra };
    },
  };
}
