// internal/admission/policy/validating-policy owns the ValidatingAdmissionPolicy admission
// plugin (validating phase): the policies and bindings as this replica's watch cache holds them
// (read per request through policy-source.ts, shared with the mutating plugin), each policy
// compiled once per generation (compile.ts), matching (match.ts), the binding's params
// (several params: each must pass), then matchConditions, validations and auditAnnotations per param, and the
// binding's validationActions: Deny rejects (upstream's Status: reason and code from the
// validation's reason), Warn adds a `Warning:` header, Audit adds the validation_failure
// audit annotation. Evaluation and configuration errors follow the policy's failurePolicy.
// Writes of policies and bindings themselves are checked here too: their author must be allowed
// to read the params they refer to (param-authorization.ts).
// Imports: admission, authz (types), http/respond (warning text), naming, schema/catalog,
// watchcache (types), policy/compile, policy/match, policy/policy-source, policy/metrics,
// policy/param-authorization; prom-client (type).

import type { AdmissionPlugin, AdmissionRequest } from '../admission.js';
import type { Attributes, Decision } from '../../authz/authorizer.js';
import type { Naming } from '../../naming/naming.js';
import type { ApiCatalog, ResourceInfo } from '../../schema/catalog.js';
import type { WatchCache } from '../../watchcache/watch-cache.js';
import type { Registry } from 'prom-client';
import { warningHeader } from '../../http/respond.js';
import { compilePolicy, evaluate, evaluateNow, EvaluationError, matchConditionsOutcome, RUNTIME_COST_BUDGET, toCel, type Activation, type Compiled, type CompiledPolicy, type CostBudget } from './compile.js';
import { matchedResource, matches } from './match.js';
import { ADMISSION_UPSTREAM_GROUP, objectsAs, PolicySource, policyActivation, policyDenial, requestVariable } from './policy-source.js';
import { PolicyMetrics, type PolicyErrorType } from './metrics.js';
import { authorizeParamReferences } from './param-authorization.js';
import { admissionConverter, type AdmissionConverter } from '../version-conversion.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export { ADMISSION_UPSTREAM_GROUP };
export const POLICIES = { upstreamGroup: ADMISSION_UPSTREAM_GROUP, resource: 'validatingadmissionpolicies', namespaced: false } as const;
export const BINDINGS = { upstreamGroup: ADMISSION_UPSTREAM_GROUP, resource: 'validatingadmissionpolicybindings', namespaced: false } as const;

export interface ValidatingPolicyDeps {
  cache: WatchCache;
  catalog: ApiCatalog;
  naming: Naming;
  /** The authorizer chain's answer, for the `authorizer` variable. */
  authorize(attrs: Attributes): Promise<Decision> | Decision;
  /** Converts the object to the version a policy matched under matchPolicy Equivalent (default: the registry's synchronous conversion). */
  convert?: AdmissionConverter;
}

/** One binding's outcome for one param: what failed and how. */
interface Failure {
  message: string;
  reason: string;
  expressionIndex?: number;
  /** How the evaluation went, for the metrics: a false validation is no_error. */
  errorType?: PolicyErrorType;
  /** A configuration error (params, paramKind): denied whatever the validationActions say. */
  config?: boolean;
}


export class ValidatingPolicyEvaluator {
  private readonly source: PolicySource<CompiledPolicy>;
  private readonly auditKey: string;
  private metrics = new PolicyMetrics();
  private readonly convert: AdmissionConverter;

  constructor(private readonly deps: ValidatingPolicyDeps) {
    this.auditKey = `${deps.naming.group('validation.policy.admission.k8s.io')}/validation_failure`;
    this.source = new PolicySource(deps.cache, deps.catalog, POLICIES, BINDINGS, compilePolicy);
    this.convert = deps.convert ?? admissionConverter();
  }

  /** Serves the metrics from `registry` (the server's, once it exists). */
  registerMetrics(registry: Registry): void {
    this.metrics = new PolicyMetrics(registry);
  }

  /** The compiled policy named `name`, compiled again only when its generation (or identity) changes. */
  policy(name: string): CompiledPolicy | undefined {
    return this.source.policy(name);
  }

  async validate(req: AdmissionRequest): Promise<void> {
    await authorizeParamReferences(req, { upstreamGroup: ADMISSION_UPSTREAM_GROUP, policies: POLICIES.resource, bindings: BINDINGS.resource }, { catalog: this.deps.catalog, authorize: (a) => this.deps.authorize(a), policyObject: (n) => this.source.policyObject(n) });
    const bindings = this.source.bindings();
    if (bindings.length === 0) return;
    let denied: { failure: Failure; policy: string; binding: string } | undefined;
    const audits: Obj[] = [];
    // The variables as each matched version sees them (the request's own, or an equivalent one's).
    const bases = new Map<ResourceInfo, { object: unknown; oldObject: unknown; request: Obj } | string>();
    for (const binding of bindings) {
      const meta = isObj(binding.metadata) ? binding.metadata : {};
      const spec = isObj(binding.spec) ? binding.spec : {};
      const policy = this.policy(str(spec.policyName));
      // A binding to a missing policy is ignored, as upstream's.
      if (!policy) continue;
      if (!matches(policy.matchConstraints, req, this.source.matchEnv)) continue;
      if (!matches(isObj(spec.matchResources) ? spec.matchResources : undefined, req, this.source.matchEnv, true)) continue;
      const matched = matchedResource(policy.matchConstraints, req, this.source.matchEnv) ?? req.resource;
      let base = bases.get(matched);
      if (!base) {
        try {
          const as = await objectsAs(req, matched, this.convert);
          base = { object: as.object === undefined ? null : toCel(as.object), oldObject: as.oldObject === undefined ? null : toCel(as.oldObject), request: requestVariable(req, as.resource) };
        } catch (e) {
          // Upstream: a configuration error of the binding, under its failurePolicy.
          base = `failed to configure binding: failed to convert object version: ${e instanceof Error ? e.message : String(e)}`;
        }
        bases.set(matched, base);
      }
      const bindingName = str(meta.name);
      const actions = Array.isArray(spec.validationActions) ? spec.validationActions.filter((a): a is string => typeof a === 'string') : ['Deny'];
      const started = process.hrtime.bigint();
      const failures =
        typeof base === 'string'
          ? policy.failurePolicy === 'Fail'
            ? [{ message: base, reason: 'Invalid', config: true }]
            : []
          : await this.evaluateBinding(policy, spec, req, base, (k, v) => req.annotate?.(`${policy.name}/${k}`, v));
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (failures.length === 0) this.metrics.observe(policy.name, bindingName, 'no_error', 'allow', seconds);
      for (const f of failures) {
        const errorType = f.errorType ?? 'no_error';
        if (f.config || actions.includes('Deny')) {
          denied ??= { failure: f, policy: policy.name, binding: bindingName };
          this.metrics.observe(policy.name, bindingName, f.config ? 'invalid_error' : errorType, 'deny', seconds);
        }
        if (f.config) continue;
        if (actions.includes('Warn')) this.metrics.observe(policy.name, bindingName, errorType, 'warn', seconds);
        if (actions.includes('Audit')) this.metrics.observe(policy.name, bindingName, errorType, 'audit', seconds);
        if (actions.includes('Warn')) req.warnings?.push(warningHeader(`Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${bindingName}': ${f.message}`));
        if (actions.includes('Audit')) {
          audits.push({ message: f.message, policy: policy.name, binding: bindingName, expressionIndex: f.expressionIndex ?? 0, validationActions: actions });
        }
      }
    }
    if (audits.length > 0) req.annotate?.(this.auditKey, JSON.stringify(audits));
    if (denied) throw policyDenial(req, `ValidatingAdmissionPolicy '${denied.policy}' with binding '${denied.binding}' denied request: ${denied.failure.message}`, denied.failure.reason);
  }

  /** Every failure of one binding (each of its params), failurePolicy applied. */
  private async evaluateBinding(
    policy: CompiledPolicy,
    bindingSpec: Obj,
    req: AdmissionRequest,
    base: { object: unknown; oldObject: unknown; request: Obj },
    annotate: (key: string, value: string) => void,
  ): Promise<Failure[]> {
    const fail = policy.failurePolicy === 'Fail';
    let params: unknown[];
    try {
      params = this.source.params(policy.name, policy.paramKind, bindingSpec, req);
    } catch (e) {
      return fail ? [{ message: `failed to configure binding: ${e instanceof Error ? e.message : String(e)}`, reason: 'Invalid', config: true }] : [];
    }
    const namespaceObject = this.source.namespaceObject(req);
    const expressions = expressionsOf(policy);
    const failures: Failure[] = [];
    for (const param of params) {
      const bound = policyActivation(policy, expressions, base, param, namespaceObject, req, (a) => this.deps.authorize(a));
      const activation = bound instanceof Promise ? await bound : bound;
      // One budget per evaluation (upstream's RuntimeCELCostBudget), shared by its expressions.
      const budget: CostBudget = { remaining: RUNTIME_COST_BUDGET };
      // matchConditions: any false skips the policy for this request; errors count only then.
      const conditions = policy.matchConditions.length === 0 ? undefined : await matchConditionsOutcome(policy, activation, budget);
      if (conditions === 'skip') continue;
      if (conditions) {
        if (fail) failures.push({ message: conditions.error, reason: 'Invalid', errorType: 'invalid_error' });
        continue;
      }
      for (let i = 0; i < policy.validations.length; i++) {
        const v = policy.validations[i]!;
        let ok: unknown;
        try {
          // Most expressions do not ask the authorizer: those run without a promise each.
          ok = v.expression.async ? await evaluate(v.expression, activation, budget) : evaluateNow(v.expression, activation, budget);
        } catch (e) {
          if (fail) failures.push({ message: e instanceof Error ? e.message : String(e), reason: 'Invalid', expressionIndex: i, errorType: v.expression.program ? 'invalid_error' : 'compile_error' });
          continue;
        }
        if (ok === true) continue;
        failures.push({ message: await this.message(v, activation, budget), reason: v.reason, expressionIndex: i });
      }
      for (const a of policy.auditAnnotations) {
        try {
          const value = await evaluate(a.expr, activation, budget);
          if (typeof value === 'string') annotate(a.key, value);
        } catch {
          // An annotation that fails to evaluate is left out, as upstream's.
        }
      }
    }
    return failures;
  }

  /** messageExpression's text when it gives one, else message, else upstream's default. */
  private async message(v: CompiledPolicy['validations'][number], activation: Activation, budget: CostBudget): Promise<string> {
    if (v.messageExpression) {
      try {
        const m = await evaluate(v.messageExpression, activation, budget);
        if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n') && m.length <= 5000) return m;
      } catch (e) {
        if (!(e instanceof EvaluationError)) throw e;
      }
    }
    return v.message || `failed expression: ${v.expression.source.trim()}`;
  }
}

const policyExpressions = new WeakMap<CompiledPolicy, readonly Compiled[]>();

/** Every expression of a compiled policy (which never changes: a new generation is a new one). */
function expressionsOf(policy: CompiledPolicy): readonly Compiled[] {
  let out = policyExpressions.get(policy);
  if (!out) {
    out = [...policy.matchConditions.map((m) => m.expr), ...policy.variables.map((v) => v.expr), ...policy.validations.flatMap((v) => [v.expression, ...(v.messageExpression ? [v.messageExpression] : [])]), ...policy.auditAnnotations.map((a) => a.expr)];
    policyExpressions.set(policy, out);
  }
  return out;
}

/** The ValidatingAdmissionPolicy plugin (validating phase, every write operation). */
export function validatingAdmissionPolicy(deps: ValidatingPolicyDeps): AdmissionPlugin & { evaluator: ValidatingPolicyEvaluator } {
  const evaluator = new ValidatingPolicyEvaluator(deps);
  return {
    name: 'ValidatingAdmissionPolicy',
    evaluator,
    handles: () => true,
    validate: (req) => evaluator.validate(req),
  };
}
