// internal/authz/authorization-config owns the AuthorizationConfiguration file
// (--authorization-config): decoding it (YAML or JSON; apiVersion apiserver.config.<domain>/v1,
// v1beta1 or v1alpha1 as upstream accepts), defaulting the webhook block as upstream's v1
// defaults do, and validating every field with upstream's field-error wording. Match
// conditions are compiled (cel-js) here, so a bad expression stops the load. The result is the
// ordered list of configured authorizers chain.ts builds from.
// Imports: webhook-config, selectors/label-syntax (DNS-1123), cel (compile and type check),
// config/duration, js-yaml.

import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { load } from 'js-yaml';
import { CelCompileError, celEnvironment, compileExpression } from '../cel/cel.js';
import { parseDuration } from '../config/duration.js';
import { dns1123SubdomainErrors } from '../selectors/label-syntax.js';
import type { WebhookAuthorizerConfig } from './webhook-config.js';

export type AuthorizerType = 'AlwaysAllow' | 'AlwaysDeny' | 'ABAC' | 'RBAC' | 'Node' | 'Webhook';

/** One entry of the chain after the privileged group: its type, its name (metrics), and a webhook's settings. */
export interface ConfiguredAuthorizer {
  type: AuthorizerType;
  name: string;
  webhook?: WebhookAuthorizerConfig;
}

export class AuthorizationConfigError extends Error {
  override name = 'AuthorizationConfigError';
  constructor(readonly problems: string[]) {
    // utilerrors.NewAggregate's shape: one error bare, several in brackets.
    super(problems.length === 1 ? problems[0]! : `[${problems.join(', ')}]`);
  }
}

export const CONFIG_KIND = 'AuthorizationConfiguration';
const CONFIG_VERSIONS = ['v1', 'v1beta1', 'v1alpha1'] as const;
/** The types the file may name (the spec's list; AlwaysAllow, AlwaysDeny and ABAC stay flag-only here). */
const FILE_TYPES = ['Node', 'RBAC', 'Webhook'] as const;
/** Types that may appear more than once (upstream's RepeatableAuthorizerTypes). */
const REPEATABLE = new Set<string>(['Webhook']);
export const MAX_MATCH_CONDITIONS = 64;
/** Match conditions see `request`, a SubjectAccessReview v1 spec, and must be boolean. */
const MATCH_CONDITIONS = celEnvironment({ request: 'map' });
export const MAX_WEBHOOK_TIMEOUT_MS = 30_000;

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => typeof v === 'object' && v !== null && !Array.isArray(v);
const q = (v: unknown): string => JSON.stringify(typeof v === 'string' ? v : String(v));
const supported = (values: readonly string[]): string => values.map((x) => `"${x}"`).join(', ');

/** A Go duration (metav1.Duration's JSON form), negative allowed so validation can say why it is wrong. */
function durationMs(raw: unknown): number | undefined {
  if (typeof raw !== 'string') return undefined;
  const s = raw.trim();
  try {
    return s.startsWith('-') ? -parseDuration(s.slice(1)) : parseDuration(s);
  } catch {
    return undefined;
  }
}

export interface ParseOptions {
  /** `apiserver.config.cluster.io` or `apiserver.config.k8s.io` (per --naming). */
  group: string;
}

/** Decodes, defaults and validates; throws AuthorizationConfigError listing every problem. */
export function parseAuthorizationConfig(text: string, options: ParseOptions): ConfiguredAuthorizer[] {
  let doc: unknown;
  try {
    doc = load(text);
  } catch (e) {
    throw new AuthorizationConfigError([`not valid YAML or JSON: ${(e as Error).message.split('\n')[0]}`]);
  }
  if (!isMapping(doc)) throw new AuthorizationConfigError([`expected a mapping with apiVersion and kind ${CONFIG_KIND}`]);
  const problems: string[] = [];
  const err = (path: string, body: string): void => void problems.push(`${path}: ${body}`);
  const accepted = CONFIG_VERSIONS.map((v) => `${options.group}/${v}`);
  if (!accepted.includes(String(doc.apiVersion))) err('apiVersion', `Unsupported value: ${q(doc.apiVersion ?? '')}: supported values: ${supported(accepted)}`);
  if (doc.kind !== CONFIG_KIND) err('kind', `Unsupported value: ${q(doc.kind ?? '')}: supported values: "${CONFIG_KIND}"`);
  if (problems.length) throw new AuthorizationConfigError(problems);

  const list = doc.authorizers ?? [];
  if (!Array.isArray(list)) throw new AuthorizationConfigError(['authorizers: Invalid value: must be a list']);
  if (list.length === 0) err('authorizers', 'Required value: at least one authorization mode must be defined');
  const out: ConfiguredAuthorizer[] = [];
  const seenTypes = new Set<string>();
  const seenNames = new Set<string>();
  list.forEach((entry: unknown, i: number) => {
    const at = `authorizers[${i}]`;
    if (!isMapping(entry)) return err(at, 'Invalid value: must be an object');
    const type = entry.type;
    if (type === undefined || type === '') return err(`${at}.type`, 'Required value');
    if (typeof type !== 'string' || !(FILE_TYPES as readonly string[]).includes(type)) {
      return err(`${at}.type`, `Unsupported value: ${q(type)}: supported values: ${supported(FILE_TYPES)}`);
    }
    if (seenTypes.has(type) && !REPEATABLE.has(type)) return err(`${at}.type`, `Duplicate value: ${q(type)}`);
    seenTypes.add(type);
    const name = typeof entry.name === 'string' ? entry.name : '';
    if (name === '') err(`${at}.name`, 'Required value');
    else if (seenNames.has(name)) err(`${at}.name`, `Duplicate value: ${q(name)}`);
    else {
      const nameErrors = dns1123SubdomainErrors(name);
      if (nameErrors.length) err(`${at}.name`, `Invalid value: ${q(name)}: authorizer name is invalid: ${nameErrors.join(', ')}`);
    }
    seenNames.add(name);
    const configured: ConfiguredAuthorizer = { type: type as AuthorizerType, name };
    if (type === 'Webhook') {
      if (!isMapping(entry.webhook)) return err(`${at}.webhook`, 'Required value: required when type=Webhook');
      const webhook = parseWebhook(entry.webhook, `${at}.webhook`, err);
      if (webhook) configured.webhook = webhook;
    } else if (entry.webhook !== undefined && entry.webhook !== null) {
      err(`${at}.webhook`, 'Invalid value: "non-null": may only be specified when type=Webhook');
    }
    out.push(configured);
  });
  if (problems.length) throw new AuthorizationConfigError(problems);
  return out;
}

function parseWebhook(w: Mapping, at: string, err: (path: string, body: string) => void): WebhookAuthorizerConfig | undefined {
  const before = { count: 0 };
  const e = (path: string, body: string): void => {
    before.count++;
    err(path, body);
  };
  // Upstream's v1 defaults: zero TTLs become 5m / 30s, the cache switches default to true.
  const ttl = (field: string, fallback: number): number => {
    const raw = w[field];
    if (raw === undefined || raw === null) return fallback;
    const ms = durationMs(raw);
    if (ms === undefined) {
      e(`${at}.${field}`, `Invalid value: ${q(raw)}: must be a duration such as 30s or 5m0s`);
      return fallback;
    }
    if (ms === 0) return fallback;
    if (ms < 0) e(`${at}.${field}`, `Invalid value: ${q(raw)}: must be greater than 0`);
    return ms;
  };
  const authorizedTtlMs = ttl('authorizedTTL', 300_000);
  const unauthorizedTtlMs = ttl('unauthorizedTTL', 30_000);
  const flag = (field: string): boolean => {
    const raw = w[field];
    if (raw === undefined || raw === null) return true;
    if (typeof raw !== 'boolean') {
      e(`${at}.${field}`, `Invalid value: ${q(raw)}: must be true or false`);
      return true;
    }
    return raw;
  };
  const cacheAuthorizedRequests = flag('cacheAuthorizedRequests');
  const cacheUnauthorizedRequests = flag('cacheUnauthorizedRequests');

  let timeoutMs = 0;
  if (w.timeout === undefined || w.timeout === null || w.timeout === '') e(`${at}.timeout`, 'Required value');
  else {
    const ms = durationMs(w.timeout);
    if (ms === undefined) e(`${at}.timeout`, `Invalid value: ${q(w.timeout)}: must be a duration such as 3s`);
    else if (ms === 0) e(`${at}.timeout`, 'Required value');
    else if (ms < 0 || ms > MAX_WEBHOOK_TIMEOUT_MS) e(`${at}.timeout`, `Invalid value: ${q(w.timeout)}: must be > 0s and <= 30s`);
    else timeoutMs = ms;
  }

  const sarVersion = w.subjectAccessReviewVersion;
  if (sarVersion === undefined || sarVersion === '') e(`${at}.subjectAccessReviewVersion`, 'Required value');
  else if (sarVersion !== 'v1' && sarVersion !== 'v1beta1') e(`${at}.subjectAccessReviewVersion`, `Unsupported value: ${q(sarVersion)}: supported values: "v1", "v1beta1"`);
  const mcVersion = w.matchConditionSubjectAccessReviewVersion;
  if (mcVersion === undefined || mcVersion === '') e(`${at}.matchConditionSubjectAccessReviewVersion`, 'Required value');
  else if (mcVersion !== 'v1') e(`${at}.matchConditionSubjectAccessReviewVersion`, `Unsupported value: ${q(mcVersion)}: supported values: "v1"`);
  const failurePolicy = w.failurePolicy;
  if (failurePolicy === undefined || failurePolicy === '') e(`${at}.failurePolicy`, 'Required value');
  else if (failurePolicy !== 'NoOpinion' && failurePolicy !== 'Deny') e(`${at}.failurePolicy`, `Unsupported value: ${q(failurePolicy)}: supported values: "Deny", "NoOpinion"`);

  let kubeConfigFile = '';
  const ci = w.connectionInfo;
  if (!isMapping(ci) || ci.type === undefined || ci.type === '') e(`${at}.connectionInfo.type`, 'Required value');
  else if (ci.type === 'InClusterConfig') {
    if (ci.kubeConfigFile !== undefined && ci.kubeConfigFile !== null) e(`${at}.connectionInfo.kubeConfigFile`, `Invalid value: ${q(ci.kubeConfigFile)}: can only be set when type=KubeConfigFile`);
    // Upstream's API server refuses it too: it would call itself through its own service account.
    e(`${at}.connectionInfo.type`, 'Invalid value: "InClusterConfig": not supported for the API server itself; use KubeConfigFile');
  } else if (ci.type === 'KubeConfigFile') {
    const path = ci.kubeConfigFile;
    if (typeof path !== 'string' || path === '') e(`${at}.connectionInfo.kubeConfigFile`, 'Required value');
    else if (!isAbsolute(path)) e(`${at}.connectionInfo.kubeConfigFile`, `Invalid value: ${q(path)}: must be an absolute path`);
    else {
      try {
        if (!statSync(path).isFile()) e(`${at}.connectionInfo.kubeConfigFile`, `Invalid value: ${q(path)}: must be a regular file`);
        else kubeConfigFile = path;
      } catch (x) {
        e(`${at}.connectionInfo.kubeConfigFile`, `Invalid value: ${q(path)}: error loading file: ${(x as Error).message}`);
      }
    }
  } else {
    e(`${at}.connectionInfo.type`, `Unsupported value: ${q(ci.type)}: supported values: "InClusterConfig", "KubeConfigFile"`);
  }

  const matchConditions: Array<{ expression: string }> = [];
  const rawConditions = w.matchConditions ?? [];
  if (!Array.isArray(rawConditions)) e(`${at}.matchConditions`, 'Invalid value: must be a list');
  else {
    if (rawConditions.length > MAX_MATCH_CONDITIONS) e(`${at}.matchConditions`, `Too many: ${rawConditions.length}: must have at most ${MAX_MATCH_CONDITIONS} items`);
    const seen = new Set<string>();
    rawConditions.forEach((c: unknown, i: number) => {
      const path = `${at}.matchConditions[${i}].expression`;
      const expression = isMapping(c) && typeof c.expression === 'string' ? c.expression : '';
      if (expression.trim() === '') return e(path, 'Required value');
      if (seen.has(expression)) return e(path, `Duplicate value: ${q(expression)}`);
      seen.add(expression);
      try {
        compileExpression(MATCH_CONDITIONS, expression, path, ['bool']);
      } catch (x) {
        if (x instanceof CelCompileError) return e(path, x.message.slice(path.length + 2));
        throw x;
      }
      matchConditions.push({ expression });
    });
  }
  if (before.count) return undefined;
  return {
    authorizedTtlMs,
    cacheAuthorizedRequests,
    unauthorizedTtlMs,
    cacheUnauthorizedRequests,
    timeoutMs,
    subjectAccessReviewVersion: sarVersion as 'v1' | 'v1beta1',
    matchConditionSubjectAccessReviewVersion: 'v1',
    failurePolicy: failurePolicy as 'NoOpinion' | 'Deny',
    kubeConfigFile,
    matchConditions,
  };
}
