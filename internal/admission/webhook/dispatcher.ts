// internal/admission/webhook/dispatcher owns calling admission webhooks: the
// MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins. Configurations are read from
// this replica's watch cache on every request (compiled once per stored version), so every
// replica acts on the same configurations. Per webhook: match (hooks.ts), match conditions
// (CEL; an error follows failurePolicy), the dry-run rule, the call (timeoutSeconds; service or
// URL with caBundle through webhook/client-config), then the answer: warnings and audit
// annotations passed on, a denial as upstream's Status, a JSON patch applied to the object (in
// the version the webhook registered for) and the object defaulted again. Mutating webhooks run
// in order, with one reinvocation round for `IfNeeded` webhooks that an object change followed
// (a later webhook's, or a mutating policy's reinvocation through the chain's reinvoke);
// validating webhooks are called in parallel. A failed call fails the request (500) unless the
// webhook's failurePolicy is Ignore.
// Imports: admission, webhook/{hooks,review,metrics}, webhook/client-config, auth/webhook-client,
// authz (types), cel-authorizer, patch/json-patch, registry/conversion, apierrors, http/respond.

import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import { errors, StatusError, type Status } from '../../apierrors/status.js';
import { WebhookCallError } from '../../auth/webhook-client.js';
import type { Attributes, Decision } from '../../authz/authorizer.js';
import { authorizerFor } from '../../authz/cel-authorizer.js';
import { expectBoolean } from '../../cel/cel.js';
import { warningHeader } from '../../http/respond.js';
import type { Logger } from '../../log/logger.js';
import type { Naming } from '../../naming/naming.js';
import { applyJsonPatch } from '../../patch/json-patch.js';
import type { JsonValue } from '../../patch/json-value.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import { callWebhook, type EndpointServiceResolver, type WebhookClientConfig } from '../../webhook/client-config.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from '../admission.js';
import { admissionConverter, type AdmissionConverter } from '../version-conversion.js';
import { compileConfiguration, matchingResource, namespaceSelectorMatches, objectSelectorMatches, type Hook } from './hooks.js';
import { admissionWebhookMetrics, type AdmissionWebhookMetrics, type StepType } from './metrics.js';
import { admissionGroup, InvalidResponseError, parseReviewResponse, reviewBody, reviewRequest, reviewVersionFor, type ReviewResponse } from './review.js';

/** A stored configuration as the watch cache holds it. */
export interface StoredConfiguration {
  readonly bytes: Buffer;
  readonly corrupt?: string;
}

export interface WebhookDispatcherDeps {
  naming: Naming;
  /** The stored configurations of one kind, in name order (this replica's watch cache). */
  configurations(mutating: boolean): readonly StoredConfiguration[];
  /** Every served resource that shares `r`'s stored objects (other versions and groups), for matchPolicy Equivalent. */
  equivalents(r: ResourceInfo): readonly ResourceInfo[];
  /** A namespace's labels; undefined when it does not exist. */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
  resolver: EndpointServiceResolver;
  /** The authorizer chain, for the `authorizer` variable of match conditions. */
  authorize(attrs: Attributes): Promise<Decision> | Decision;
  /** Sets the defaults of `r`'s kind on `obj` (in place): a patched object is defaulted again. */
  applyDefaults(r: ResourceInfo, obj: JsonObject): void;
  /**
   * Converts the object to the version a webhook matched through an equivalent resource and a
   * patched one back (a custom resource's conversion webhook included); default: the registry's
   * synchronous conversion.
   */
  convert?: AdmissionConverter;
  /** Where the metrics are registered (registerMetrics may name it later). */
  registry?: Registry;
  log: Logger;
}

/** Upstream's IsExemptAdmissionConfigurationResource: these are never sent to webhooks. */
const EXEMPT_RESOURCES = new Set([
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

/** A failed call (transport, timeout, invalid answer): failurePolicy decides. */
class CallingError extends Error {
  constructor(
    readonly hook: string,
    reason: string,
    readonly code: number,
  ) {
    super(`failed calling webhook "${hook}": ${reason}`);
  }
}

const deepEqual = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Upstream's ToStatusErr: a webhook's denial as the request's Status. */
function denial(hook: string, status: JsonObject | undefined): StatusError {
  const deniedBy = `admission webhook "${hook}" denied the request`;
  const s = status ?? {};
  const code = typeof s.code === 'number' && s.code >= 400 ? s.code : 400;
  const message = typeof s.message === 'string' && s.message ? `${deniedBy}: ${s.message}` : typeof s.reason === 'string' && s.reason ? `${deniedBy}: ${s.reason}` : `${deniedBy} without explanation`;
  const out: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code };
  if (typeof s.reason === 'string' && s.reason) out.reason = s.reason as Status['reason'];
  if (s.details && typeof s.details === 'object') out.details = s.details as Status['details'];
  return new StatusError(out);
}

/** What one call of a webhook decided. */
type Outcome = { kind: 'skipped' } | { kind: 'answered'; response: ReviewResponse; resource: ResourceInfo; object: JsonObject | undefined };

/** One request's reinvocation bookkeeping: the object after each IfNeeded webhook's call. */
interface ReinvocationState {
  /** The webhooks as round 0 saw them: one request acts on one set of configurations. */
  hooks: readonly Hook[];
  after: Map<Hook, string>;
  reinvoked: Set<Hook>;
}

export class WebhookDispatcher {
  private readonly compiled = new WeakMap<object, Hook[]>();
  private readonly reinvocation = new WeakMap<AdmissionRequest, ReinvocationState>();
  private metrics: AdmissionWebhookMetrics;
  private readonly group: string;
  private readonly converter: AdmissionConverter;

  constructor(private readonly deps: WebhookDispatcherDeps) {
    this.metrics = admissionWebhookMetrics(deps.registry);
    this.group = admissionGroup(deps.naming);
    this.converter = deps.convert ?? admissionConverter();
  }

  /** A conversion for an Equivalent match; a failure fails the request whatever the failurePolicy (upstream's internal error). */
  private async convertOrFail(obj: JsonObject, from: ResourceInfo, to: ResourceInfo): Promise<JsonObject> {
    try {
      return await this.converter(obj, from, to);
    } catch (e) {
      throw e instanceof StatusError ? e : errors.internal(e instanceof Error ? e.message : String(e));
    }
  }

  /** Registers the metrics on the server's registry (built after the admission chain). */
  registerMetrics(registry: Registry): void {
    this.metrics = admissionWebhookMetrics(registry);
  }

  /** The webhooks of every stored configuration of the kind, configurations in name order. */
  hooks(mutating: boolean): Hook[] {
    const out: Hook[] = [];
    for (const entry of this.deps.configurations(mutating)) {
      if (entry.corrupt) continue;
      let hooks = this.compiled.get(entry);
      if (!hooks) {
        try {
          hooks = compileConfiguration(JSON.parse(entry.bytes.toString('utf8')) as JsonObject, mutating);
        } catch {
          hooks = [];
        }
        this.compiled.set(entry, hooks);
      }
      out.push(...hooks);
    }
    return out;
  }

  mutatingPlugin(): AdmissionPlugin {
    return {
      name: 'MutatingAdmissionWebhook',
      handles: () => true,
      admit: (req) => this.mutate(req),
      reinvoke: (req) => this.reinvoke(req),
      // reinvoke returns at once without an IfNeeded webhook called in round 0.
      reinvocable: (req) => (this.reinvocation.get(req)?.after.size ?? 0) > 0,
    };
  }

  validatingPlugin(): AdmissionPlugin {
    return { name: 'ValidatingAdmissionWebhook', handles: () => true, validate: (req) => this.validate(req) };
  }

  private exempt(req: AdmissionRequest): boolean {
    return this.deps.naming.upstreamGroup(req.resource.group) === 'admissionregistration.k8s.io' && EXEMPT_RESOURCES.has(req.resource.resource);
  }

  async mutate(req: AdmissionRequest): Promise<void> {
    const hooks = this.hooks(true);
    if (hooks.length === 0 || this.exempt(req)) return;
    // Round 0 calls every matching webhook; round 1 (reinvoke) those with reinvocationPolicy
    // IfNeeded whose object changed after their call: by a later webhook here, or by a later
    // plugin (a MutatingAdmissionPolicy's reinvocation) through the chain's reinvoke.
    const state: ReinvocationState = { hooks, after: new Map(), reinvoked: new Set() };
    this.reinvocation.set(req, state);
    for (let i = 0; i < hooks.length; i++) {
      const hook = hooks[i]!;
      const result = await this.callMutating(hook, req, 0, i);
      if (result !== 'skipped' && hook.reinvoke) state.after.set(hook, JSON.stringify(req.object));
    }
    await this.reinvoke(req);
  }

  /** Round 1: each IfNeeded webhook called in round 0 whose object changed since, at most once. */
  async reinvoke(req: AdmissionRequest): Promise<void> {
    const state = this.reinvocation.get(req);
    if (!state || state.after.size === 0) return;
    const { hooks } = state;
    for (let i = 0; i < hooks.length; i++) {
      const hook = hooks[i]!;
      const after = state.after.get(hook);
      if (after === undefined || state.reinvoked.has(hook) || after === JSON.stringify(req.object)) continue;
      state.reinvoked.add(hook);
      await this.callMutating(hook, req, 1, i);
    }
  }

  async validate(req: AdmissionRequest): Promise<void> {
    const hooks = this.hooks(false);
    if (hooks.length === 0 || this.exempt(req)) return;
    // Every call starts before any answer is looked at; the first failure in webhook order wins
    // (upstream takes the first to arrive; the order here keeps answers reproducible).
    const results = await Promise.allSettled(hooks.map((h) => this.callOne(h, req, 'validate')));
    for (let i = 0; i < results.length; i++) {
      const r = results[i]!;
      if (r.status === 'rejected') throw r.reason;
      if (r.value.kind === 'answered') this.judge(hooks[i]!, req, 'validate', r.value.response);
    }
  }

  /** One mutating webhook: 'skipped' when not called (or its failure ignored), else whether it changed the object. */
  private async callMutating(hook: Hook, req: AdmissionRequest, round: number, index: number): Promise<'skipped' | 'same' | 'changed'> {
    const outcome = await this.callOne(hook, req, 'admit');
    if (outcome.kind === 'skipped') return 'skipped';
    const { response } = outcome;
    this.judge(hook, req, 'admit', response);
    let changed = false;
    if (response.patch !== undefined && req.object && outcome.object) {
      let patched: JsonObject;
      try {
        patched = applyJsonPatch(outcome.object as unknown as JsonValue, response.patch) as unknown as JsonObject;
      } catch (e) {
        throw errors.internal(e instanceof Error ? e.message : String(e));
      }
      const back = outcome.resource === req.resource ? patched : await this.convertOrFail(patched, outcome.resource, req.resource);
      this.deps.applyDefaults(req.resource, back);
      changed = !deepEqual(back, req.object);
      if (changed) {
        // The object is changed in place: the writer holds it.
        const target = req.object as Record<string, unknown>;
        for (const k of Object.keys(target)) delete target[k];
        Object.assign(target, back);
      }
    }
    req.annotate?.(`mutation.webhook.${this.group}/round_${round}_index_${index}`, JSON.stringify({ configuration: hook.configuration, webhook: hook.name, mutated: changed }));
    return changed ? 'changed' : 'same';
  }

  /** Applies an answer: warnings, audit annotations, then a denial. */
  private judge(hook: Hook, req: AdmissionRequest, type: StepType, response: ReviewResponse): void {
    for (const [k, v] of Object.entries(response.auditAnnotations)) req.annotate?.(`${hook.name}/${k}`, v);
    if (req.warnings) for (const w of response.warnings) req.warnings.push(warningHeader(w));
    if (!response.allowed) {
      const err = denial(hook.name, response.status);
      this.metrics.rejection(hook.name, type, req.operation, 'no_error', err.code);
      throw err;
    }
  }

  /** Decides whether `hook` is called for `req` and calls it; failures follow its failurePolicy. */
  private async callOne(hook: Hook, req: AdmissionRequest, type: StepType): Promise<Outcome> {
    const skipped: Outcome = { kind: 'skipped' };
    const resource = matchingResource(hook, req, () => this.deps.equivalents(req.resource));
    if (!resource) return skipped;
    if (!(await namespaceSelectorMatches(hook, req, (ns) => this.deps.namespaceLabels(ns)))) return skipped;
    if (!objectSelectorMatches(hook, req)) return skipped;
    const failed = (reason: string, code: number): Outcome => {
      const e = new CallingError(hook.name, reason, code);
      if (hook.failurePolicy === 'Ignore') {
        this.metrics.failOpen(hook.name, type);
        this.deps.log.warn('admission webhook failed, ignored by its failure policy', { webhook: hook.name, configuration: hook.configuration, error: e.message });
        return skipped;
      }
      this.metrics.rejection(hook.name, type, req.operation, 'calling_webhook_error', code);
      throw errors.internal(e.message);
    };
    if (hook.brokenReason) return failed(hook.brokenReason, 0);
    const convert = async (o: JsonObject | undefined): Promise<JsonObject | undefined> => (o && resource !== req.resource ? this.convertOrFail(structuredClone(o), req.resource, resource) : o);
    const object = await convert(req.object);
    const oldObject = await convert(req.oldObject);
    const uid = randomUUID();
    const request = reviewRequest(uid, req, resource, this.deps.naming.metaGroup);
    if (hook.matchConditions.length > 0) {
      const verdict = await this.matchConditions(hook, req, request, object, oldObject);
      if (verdict === false) return skipped;
      if (typeof verdict === 'string') {
        if (hook.failurePolicy === 'Ignore') return skipped;
        throw errors.forbidden({ group: req.resource.group, name: req.resource.resource }, req.name || undefined, verdict);
      }
    }
    if (req.dryRun && hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') {
      throw errors.badRequest(`admission webhook "${hook.name}" does not support dry run`);
    }
    const version = reviewVersionFor(hook.admissionReviewVersions);
    if (!version) return failed(`webhook does not accept known AdmissionReview versions (${hook.admissionReviewVersions.join(', ')})`, 0);
    const { config, url } = this.target(hook);
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    let reply: unknown;
    try {
      reply = await callWebhook(config, reviewBody(version, this.group, request, object, oldObject), this.deps.resolver, { timeoutMs: hook.timeoutSeconds * 1000, service: `admission webhook "${hook.name}"` });
    } catch (e) {
      const code = e instanceof WebhookCallError ? (e.status ?? 0) : 0;
      this.metrics.observe(hook.name, type, req.operation, hook.failurePolicy === 'Fail', code, seconds());
      const detail = e instanceof WebhookCallError && e.kind === 'timeout' ? 'context deadline exceeded' : e instanceof WebhookCallError && e.status === 200 ? 'the response is not JSON' : (e as Error).message;
      if (e instanceof WebhookCallError && e.status === 200) return failed(`received invalid webhook response: ${detail}`, code);
      return failed(`failed to call webhook: Post "${url}": ${detail}`, code);
    }
    let response: ReviewResponse;
    try {
      response = parseReviewResponse(reply, version, this.group, uid, hook.mutating);
    } catch (e) {
      this.metrics.observe(hook.name, type, req.operation, hook.failurePolicy === 'Fail', 200, seconds());
      if (e instanceof InvalidResponseError) return failed(e.message, 200);
      throw e;
    }
    const code = response.allowed ? 200 : typeof response.status?.code === 'number' && response.status.code >= 400 ? response.status.code : 400;
    this.metrics.observe(hook.name, type, req.operation, !response.allowed, code, seconds());
    return { kind: 'answered', response, resource, object };
  }

  /** true: call it; false: a condition is false; a string: evaluation failed (the message). */
  private async matchConditions(hook: Hook, req: AdmissionRequest, request: JsonObject, object: JsonObject | undefined, oldObject: JsonObject | undefined): Promise<boolean | string> {
    const authorizer = authorizerFor({
      authorize: (a) => this.deps.authorize(a),
      user: req.user,
      requestResource: { group: req.resource.group, resource: req.resource.resource, subresource: req.subresource, namespace: req.namespace, name: req.name },
    });
    const vars = { object: object ?? null, oldObject: oldObject ?? null, request, authorizer };
    const failures: string[] = [];
    for (const c of hook.matchConditions) {
      try {
        // A false condition decides at once, whatever errors others have.
        if (!expectBoolean(await c.expression.runAsync(vars), c.expression.path)) return false;
      } catch (e) {
        failures.push(`expression '${c.name}' resulted in error: ${(e as Error).message}`);
      }
    }
    return failures.length ? `failed to evaluate match conditions for webhook "${hook.name}": ${failures.join('; ')}` : true;
  }

  /** The client config called (upstream adds `?timeout=<n>s`) and the URL named in messages. */
  private target(hook: Hook): { config: WebhookClientConfig; url: string } {
    const timeout = `timeout=${hook.timeoutSeconds}s`;
    const withTimeout = (u: string) => `${u}${u.includes('?') ? '&' : '?'}${timeout}`;
    const c = hook.clientConfig;
    if (c.url !== undefined) return { config: { ...c, url: withTimeout(c.url) }, url: withTimeout(c.url) };
    if (!c.service) return { config: c, url: '' };
    const path = c.service.path ?? '/';
    const port = c.service.port ?? 443;
    return {
      config: { ...c, service: { ...c.service, path: withTimeout(path) } },
      url: withTimeout(`https://${c.service.name}.${c.service.namespace}.svc:${port}${path.startsWith('/') ? path : `/${path}`}`),
    };
  }
}
