// internal/admission/policy/mutating-policy owns the MutatingAdmissionPolicy admission plugin
// (mutating phase, behind the MutatingAdmissionPolicy gate): bindings and policies read from
// this replica's watch cache (policy-source.ts, as the validating plugin reads its own), matching
// (match.ts: the policy's matchConstraints, the binding's matchResources; under matchPolicy
// Equivalent the object is mutated as the version the policy named and converted back), the binding's params
// (each param runs the mutations once), matchConditions and variables, then each mutation in
// order on the object as the previous one left it: an ApplyConfiguration's `Object{…}` merged
// with structured-merge semantics (the resource's schema: maps merged, atomic lists replaced,
// map-lists merged by key, set-lists unioned; internal/fieldmanager's mergeValues), a JSONPatch
// list applied (internal/patch); an Object setting a field the schema does not declare fails, as
// upstream's typed conversion, and a policy's write warns of such fields (type-check.ts). Errors follow failurePolicy (Fail rejects, Ignore skips the
// binding). reinvocationPolicy IfNeeded: a policy that ran before a later mutator (another policy
// or, through the chain's reinvoke, a webhook) changed the object runs once more, at most once.
// The mutated object then goes through defaulting, schema validation and the validating phase
// like any object. Each mutation annotates the audit event (`mutation.policy…/round_{r}_index_{i}`).
// Imports: admission, cel, fieldmanager, http/respond, patch, schema/catalog (types), policy/compile, policy/type-check,
// policy/match, policy/policy-source, policy/validating-policy (deps type).

import type { AdmissionPlugin, AdmissionRequest, JsonObject } from '../admission.js';
import { smdTypeOf, type SmdType } from '../../fieldmanager/index.js';
import { mergeValues, typeErrorsText, validate as validateTyped } from '../../fieldmanager/typed-value.js';
import { applyJsonPatch, builtinTypeNode, customResourceTypeNode, type JsonValue } from '../../patch/index.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import { JSONPATCH_OPS } from '../../cel/cel.js';
import { bindVariables, compileMutatingPolicy, evaluate, fromCel, matchConditionsOutcome, OUT_OF_BUDGET, RUNTIME_COST_BUDGET, toCel, type CompiledMutatingPolicy, type CompiledMutation, type CostBudget } from './compile.js';
import { matchedResource, matches } from './match.js';
import { admissionConverter, type AdmissionConverter } from '../version-conversion.js';
import type { ValidatingPolicyDeps } from './validating-policy.js';
import { ADMISSION_UPSTREAM_GROUP, objectsAs, PolicySource, policyActivation, policyDenial, requestVariable } from './policy-source.js';
import { MutatingPolicyMetrics, type MutationErrorType } from './metrics.js';
import { authorizeParamReferences } from './param-authorization.js';
import type { Registry } from 'prom-client';
import { warningHeader } from '../../http/respond.js';
import { typeCheckMutatingPolicy } from './type-check.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export const MUTATING_POLICIES = { upstreamGroup: ADMISSION_UPSTREAM_GROUP, resource: 'mutatingadmissionpolicies', namespaced: false } as const;
export const MUTATING_BINDINGS = { upstreamGroup: ADMISSION_UPSTREAM_GROUP, resource: 'mutatingadmissionpolicybindings', namespaced: false } as const;

/** What the validating plugin needs, and the resource's defaults. */
export interface MutatingPolicyDeps extends ValidatingPolicyDeps {
  /** The resource's defaults, applied again after a mutation (as after a webhook's patch). */
  applyDefaults(r: ResourceInfo, obj: JsonObject): void;
}

/** A mutation that cannot be applied (its result is not what its patchType needs). */
class MutationError extends Error {}

/** What one request's round 0 left for reinvocation. */
interface RequestState {
  /** `policy/binding` of IfNeeded policies that ran, with the index of their last run. */
  ranAt: Map<string, number>;
  /** Already reinvoked (at most once each). */
  reinvoked: Set<string>;
}

export class MutatingPolicyEvaluator {
  private readonly source: PolicySource<CompiledMutatingPolicy>;
  private readonly auditPrefix: string;
  private readonly types = new WeakMap<object, SmdType>();
  private readonly state = new WeakMap<AdmissionRequest, RequestState>();
  private metrics = new MutatingPolicyMetrics();
  private readonly convert: AdmissionConverter;

  constructor(private readonly deps: MutatingPolicyDeps) {
    this.source = new PolicySource(deps.cache, deps.catalog, MUTATING_POLICIES, MUTATING_BINDINGS, compileMutatingPolicy);
    this.convert = deps.convert ?? admissionConverter();
    this.auditPrefix = `mutation.policy.${deps.naming.group('admission.k8s.io')}`;
  }

  /** Serves the metrics from `registry` (the server's, once it exists). */
  registerMetrics(registry: Registry): void {
    this.metrics = new MutatingPolicyMetrics(registry);
  }

  /** Writes of policies and bindings: their author must be allowed to read the params they name. */
  async validate(req: AdmissionRequest): Promise<void> {
    await authorizeParamReferences(req, { upstreamGroup: ADMISSION_UPSTREAM_GROUP, policies: MUTATING_POLICIES.resource, bindings: MUTATING_BINDINGS.resource }, {
      catalog: this.deps.catalog,
      authorize: (a) => this.deps.authorize(a),
      policyObject: (n) => this.source.policyObject(n),
    });
    // A policy's Object{…} field names are checked against the schemas of the resources it
    // names; there is no status to carry them (upstream's v1alpha1 has none), so they are the
    // write's warnings. The policy is stored either way: evaluation refuses the fields.
    if (req.object && req.subresource === '' && (req.operation === 'CREATE' || req.operation === 'UPDATE') && this.exempt(req) && req.resource.resource === MUTATING_POLICIES.resource) {
      for (const w of typeCheckMutatingPolicy(req.object, this.deps.catalog, (r) => this.typeOf(r))) {
        for (const line of w.warning.split('\n')) req.warnings?.push(warningHeader(`${w.fieldRef}: ${line}`));
      }
    }
  }

  /** The resource's structured-merge type (built-in schema, a CRD's schema, or deduced). */
  private typeOf(r: ResourceInfo): SmdType {
    const key: object = r.custom ?? r;
    let t = this.types.get(key);
    if (!t) {
      t = smdTypeOf(r.custom ? customResourceTypeNode(r.custom.schema, { extensionPrefix: this.deps.naming.extensionPrefix }) : r.schemaName ? builtinTypeNode(r.schemaName) : undefined);
      this.types.set(key, t);
    }
    return t;
  }

  /** Round 0: every matching binding in order; then the IfNeeded ones a later policy's change followed. */
  async admit(req: AdmissionRequest): Promise<void> {
    if (!req.object || this.exempt(req)) return;
    const state: RequestState = { ranAt: new Map(), reinvoked: new Set() };
    this.state.set(req, state);
    let lastChange = -1;
    let index = 0;
    for (const run of this.matching(req)) {
      const changed = await this.runBinding(run.policy, run.bindingSpec, run.bindingName, run.matched, req, 0, index);
      if (run.policy.reinvocationPolicy === 'IfNeeded') state.ranAt.set(run.key, index);
      if (changed) lastChange = index;
      index++;
    }
    await this.rerun(req, state, (at) => at < lastChange);
  }

  /** The chain saw the object change after this plugin: IfNeeded policies not yet reinvoked run again. */
  async reinvoke(req: AdmissionRequest): Promise<void> {
    const state = this.state.get(req);
    if (state && req.object) await this.rerun(req, state, () => true);
  }

  private async rerun(req: AdmissionRequest, state: RequestState, due: (ranAt: number) => boolean): Promise<void> {
    if (state.ranAt.size === 0) return;
    let index = 0;
    for (const run of this.matching(req)) {
      const at = state.ranAt.get(run.key);
      if (at !== undefined && due(at) && !state.reinvoked.has(run.key)) {
        state.reinvoked.add(run.key);
        await this.runBinding(run.policy, run.bindingSpec, run.bindingName, run.matched, req, 1, index);
      }
      index++;
    }
  }

  /** Policies and bindings never mutate themselves (upstream exempts its admission configuration). */
  private exempt(req: AdmissionRequest): boolean {
    return this.deps.naming.upstreamGroup(req.resource.group) === ADMISSION_UPSTREAM_GROUP;
  }

  private *matching(req: AdmissionRequest): Generator<{ key: string; policy: CompiledMutatingPolicy; bindingSpec: Obj; bindingName: string; matched: ResourceInfo }> {
    for (const binding of this.source.bindings()) {
      const spec = isObj(binding.spec) ? binding.spec : {};
      const policy = this.source.policy(str(spec.policyName));
      // A binding to a missing policy is ignored, as upstream's.
      if (!policy) continue;
      if (!matches(policy.matchConstraints, req, this.source.matchEnv)) continue;
      if (!matches(isObj(spec.matchResources) ? spec.matchResources : undefined, req, this.source.matchEnv, true)) continue;
      const bindingName = str(isObj(binding.metadata) ? binding.metadata.name : '');
      // matchPolicy Equivalent: the version the policy named, which it sees the object as.
      const matched = matchedResource(policy.matchConstraints, req, this.source.matchEnv) ?? req.resource;
      yield { key: `${policy.name}/${bindingName}`, policy, bindingSpec: spec, bindingName, matched };
    }
  }

  /** One binding (each param): whether it changed the object. A failure rejects (Fail) or is skipped (Ignore). */
  private async runBinding(policy: CompiledMutatingPolicy, bindingSpec: Obj, bindingName: string, matched: ResourceInfo, req: AdmissionRequest, round: number, index: number): Promise<boolean> {
    const started = process.hrtime.bigint();
    let errorType: MutationErrorType = 'no_error';
    try {
      return await this.runBindingParams(policy, bindingSpec, bindingName, matched, req, round, index, (t) => {
        errorType = t;
      });
    } finally {
      this.metrics.observe(policy.name, bindingName, errorType, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  private async runBindingParams(policy: CompiledMutatingPolicy, bindingSpec: Obj, bindingName: string, matched: ResourceInfo, req: AdmissionRequest, round: number, index: number, failedAs: (t: MutationErrorType) => void): Promise<boolean> {
    const fail = (message: string, type: MutationErrorType = 'invalid_error'): boolean => {
      failedAs(type);
      if (policy.failurePolicy === 'Ignore') return false;
      throw policyDenial(req, `MutatingAdmissionPolicy '${policy.name}' with binding '${bindingName}' denied request: ${message}`);
    };
    let params: unknown[];
    try {
      params = this.source.params(policy.name, policy.paramKind, bindingSpec, req);
    } catch (e) {
      return fail(`failed to configure binding: ${e instanceof Error ? e.message : String(e)}`);
    }
    const expressions = [...policy.matchConditions.map((m) => m.expr), ...policy.variables.map((v) => v.expr), ...policy.mutations.map((m) => m.expression)];
    const namespaceObject = this.source.namespaceObject(req);
    let changed = false;
    for (const param of params) {
      // The object as the matched version (each param sees what the previous one left).
      let as: Awaited<ReturnType<typeof objectsAs>>;
      try {
        as = await objectsAs(req, matched, this.convert);
      } catch (e) {
        return fail(`failed to configure binding: failed to convert object version: ${e instanceof Error ? e.message : String(e)}`);
      }
      const base = { object: toCel(as.object), oldObject: as.oldObject === undefined ? null : toCel(as.oldObject), request: requestVariable(req, as.resource) };
      const activation = await policyActivation(policy, expressions, base, param, namespaceObject, req, (a) => this.deps.authorize(a));
      const budget: CostBudget = { remaining: RUNTIME_COST_BUDGET };
      const conditions = await matchConditionsOutcome(policy, activation, budget);
      if (conditions === 'skip') continue;
      if (conditions) return fail(conditions.error);
      // Mutations apply to a copy: a failure part-way leaves the request's object as it was.
      let current = structuredClone(as.object!) as JsonObject;
      let running: CompiledMutation | undefined;
      try {
        for (const mutation of policy.mutations) {
          running = mutation;
          const result = await evaluate(mutation.expression, activation, budget);
          current = applyMutation(mutation, fromCel(result), current, this.typeOf(as.resource));
          // Later mutations (and their variables) see the object as this one left it.
          activation.object = toCel(current);
          activation.variables = await bindVariables(policy, activation);
        }
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        return fail(message, message === OUT_OF_BUDGET ? 'out_of_budget' : running && !running.expression.program ? 'compile_error' : 'invalid_error');
      }
      // Unchanged in the matched version: nothing to convert back (a round trip could reorder keys).
      if (as.resource !== req.resource && JSON.stringify(current) === JSON.stringify(as.object)) current = structuredClone(req.object!) as JsonObject;
      else if (as.resource !== req.resource) {
        try {
          current = await this.convert(current, as.resource, req.resource);
        } catch (e) {
          return fail(`failed to convert the mutated object back: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      this.deps.applyDefaults(req.resource, current);
      const mutated = JSON.stringify(current) !== JSON.stringify(req.object);
      if (mutated) {
        // The object is changed in place: the writer holds it.
        const target = req.object as Obj;
        for (const k of Object.keys(target)) delete target[k];
        Object.assign(target, current);
        changed = true;
      }
      req.annotate?.(`${this.auditPrefix}/round_${round}_index_${index}`, JSON.stringify({ policy: policy.name, binding: bindingName, mutated }));
    }
    return changed;
  }
}

/**
 * One mutation's result (`fromCel`'d) applied to `object` of type `t`: an ApplyConfiguration's
 * Object merged with structured-merge semantics, a JSONPatch list applied. Throws on a result of
 * the wrong shape or a patch that does not apply.
 */
export function applyMutation(mutation: Pick<CompiledMutation, 'patchType'> & { expression: { path: string } }, result: unknown, object: JsonObject, t: SmdType): JsonObject {
  if (mutation.patchType === 'ApplyConfiguration') {
    if (!isObj(result)) throw new MutationError(`${mutation.expression.path}: must evaluate to Object, got ${Array.isArray(result) ? 'list' : typeof result}`);
    // As upstream's typed conversion of the apply configuration: a field the resource's schema
    // does not declare (or a value of the wrong type) fails the mutation.
    const problems = validateTyped(result as JsonValue, t);
    if (problems.length > 0) throw new MutationError(`failed to convert patch object to typed object: ${typeErrorsText(problems)}`);
    const merged = mergeValues(object as JsonValue, result as JsonValue, t);
    if (!isObj(merged)) throw new MutationError(`${mutation.expression.path}: the merged object is not an object`);
    return merged as JsonObject;
  }
  if (!Array.isArray(result)) throw new MutationError(`${mutation.expression.path}: must evaluate to a list of JSONPatch, got ${typeof result}`);
  result.forEach((op, i) => {
    if (!isObj(op) || !(JSONPATCH_OPS as readonly string[]).includes(str(op.op))) throw new MutationError(`${mutation.expression.path}: JSONPatch[${i}]: op must be one of ${JSONPATCH_OPS.join(', ')}`);
    if (typeof op.path !== 'string') throw new MutationError(`${mutation.expression.path}: JSONPatch[${i}]: path is required`);
  });
  const patched = applyJsonPatch(object as JsonValue, result);
  if (!isObj(patched)) throw new MutationError(`${mutation.expression.path}: the patched object is not an object`);
  return patched as JsonObject;
}

/** The MutatingAdmissionPolicy plugin (mutating phase, every write with an object). */
export function mutatingAdmissionPolicy(deps: MutatingPolicyDeps): AdmissionPlugin & { evaluator: MutatingPolicyEvaluator } {
  const evaluator = new MutatingPolicyEvaluator(deps);
  return {
    name: 'MutatingAdmissionPolicy',
    evaluator,
    // May add fields the schema defaults (a container without its defaults, say).
    addsDefaultedFields: true,
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    admit: (req) => evaluator.admit(req),
    reinvoke: (req) => evaluator.reinvoke(req),
    validate: (req) => evaluator.validate(req),
  };
}
