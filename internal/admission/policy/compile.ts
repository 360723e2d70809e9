// internal/admission/policy/compile owns turning one ValidatingAdmissionPolicy's spec into
// runnable CEL, once per policy generation: the environment upstream offers admission
// expressions (object, oldObject, request, params, namespaceObject, authorizer with
// requestResource, variables), matchConditions, variables (composited: each sees the earlier
// ones, evaluated lazily and at most once per evaluation), validations (expression, message,
// messageExpression, reason) and auditAnnotations. A compile error never stops the policy
// from loading: the expression holds the error, and evaluation reports it (the binding then
// fails per failurePolicy, as upstream's). The same compiler checks policies at write time.
// Cost: synchronous expressions are metered (internal/cel's meter) with upstream's per-call
// limit and a per-evaluation budget the caller shares between them. At compile (and so write)
// time an expression is refused when its estimated cost exceeds the per-call limit even with every
// input as small as it can be: `object` has no schema bounding it here, so a worst-case estimate
// would refuse the ordinary policies upstream runs, while this one refuses only expressions that
// would run out of budget on every request (nested comprehensions over large literals, say).
// MutatingAdmissionPolicy compiles here too (compileMutatingPolicy): the same parts, plus its
// mutations in an environment with message construction. Imports: cel, authz/cel-authorizer.

import { CelCompileError, CelCostLimitError, LEAST, compileExpression, kubernetesCelEnvironment, newCostMeter, registerObjectConstruction, type CompiledExpression, type Environment } from '../../cel/cel.js';
import { registerAuthorizerLibrary } from '../../authz/cel-authorizer.js';
import { setMember } from '../../patch/json-value.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Upstream's per-expression limit (celconfig.PerCallLimit), in CEL cost units. */
export const PER_CALL_LIMIT = 1_000_000;
/** Upstream's admission budget (celconfig.RuntimeCELCostBudget): one policy evaluation, all its expressions. */
export const RUNTIME_COST_BUDGET = 10_000_000;

/** What is left of one policy evaluation's cost budget (shared by its expressions). */
export interface CostBudget {
  remaining: number;
}

export const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** The variables every admission expression may use. */
const ADMISSION_VARIABLES = {
  object: 'dyn',
  oldObject: 'dyn',
  request: 'map',
  params: 'dyn',
  namespaceObject: 'dyn',
  variables: 'map',
} as const;

/** Every admission variable at its smallest, for the input-independent cost estimate. */
const LEAST_INPUTS = Object.fromEntries([...Object.keys(ADMISSION_VARIABLES), 'authorizer'].map((name) => [name, LEAST]));

let sharedEnv: Environment | undefined;
/** One environment for every policy: its declarations never change. */
export function admissionEnvironment(): Environment {
  return (sharedEnv ??= registerAuthorizerLibrary(kubernetesCelEnvironment(ADMISSION_VARIABLES)));
}

let mutationEnv: Environment | undefined;
/** The admission environment plus what mutations build: `Object{…}`, `JSONPatch{…}`, `jsonpatch.escapeKey`. */
export function mutationEnvironment(): Environment {
  return (mutationEnv ??= registerObjectConstruction(registerAuthorizerLibrary(kubernetesCelEnvironment(ADMISSION_VARIABLES))));
}

/** One compiled expression, or why it did not compile. */
export interface Compiled {
  readonly source: string;
  readonly path: string;
  readonly program?: CompiledExpression;
  readonly error?: string;
  /** Uses `authorizer`: evaluated asynchronously (its checks ask the authorizer chain). */
  readonly async: boolean;
}

export interface CompiledValidation {
  readonly expression: Compiled;
  readonly message: string;
  readonly messageExpression?: Compiled;
  readonly reason: string;
}

export interface CompiledPolicy {
  readonly name: string;
  readonly generation: number;
  readonly uid: string;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly paramKind?: { apiVersion: string; kind: string };
  readonly matchConstraints: Obj | undefined;
  readonly matchConditions: ReadonlyArray<{ name: string; expr: Compiled }>;
  readonly variables: ReadonlyArray<{ name: string; expr: Compiled }>;
  readonly validations: readonly CompiledValidation[];
  readonly auditAnnotations: ReadonlyArray<{ key: string; expr: Compiled }>;
  /** Compile errors, `<field path>: <message>`: what the write-time check refuses. */
  readonly errors: readonly string[];
}

const usesAuthorizer = (source: string): boolean => /\bauthorizer\b/.test(source);

function compileOne(source: string, path: string, want?: readonly string[], env: Environment = admissionEnvironment()): Compiled {
  const async = usesAuthorizer(source);
  try {
    const program = compileExpression(env, source, path, want);
    const cost = program.estimateCost(LEAST_INPUTS);
    if (cost > PER_CALL_LIMIT) {
      return { source, path, async, error: `${path}: Forbidden: estimated rule cost exceeds budget by factor of ${(cost / PER_CALL_LIMIT).toFixed(1)}x (even with the smallest input: try simplifying the expression)` };
    }
    return { source, path, program, async };
  } catch (e) {
    const message = e instanceof CelCompileError ? e.message : `${path}: ${e instanceof Error ? e.message : String(e)}`;
    return { source, path, async, error: message };
  }
}

const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** Compiles a policy object (defaulted, as stored). */
export function compilePolicy(policy: Obj): CompiledPolicy {
  const meta = isObj(policy.metadata) ? policy.metadata : {};
  const spec = isObj(policy.spec) ? policy.spec : {};
  const errors: string[] = [];
  const track = (c: Compiled): Compiled => {
    if (c.error) errors.push(c.error);
    return c;
  };
  const matchConditions = list(spec.matchConditions).map((m, i) => ({
    name: str(m.name),
    expr: track(compileOne(str(m.expression), `spec.matchConditions[${i}].expression`, ['bool'])),
  }));
  const variables = list(spec.variables).map((v, i) => ({ name: str(v.name), expr: track(compileOne(str(v.expression), `spec.variables[${i}].expression`)) }));
  const validations = list(spec.validations).map((v, i): CompiledValidation => {
    const out: CompiledValidation = {
      expression: track(compileOne(str(v.expression), `spec.validations[${i}].expression`, ['bool'])),
      message: str(v.message),
      reason: str(v.reason) || 'Invalid',
      ...(str(v.messageExpression) ? { messageExpression: track(compileOne(str(v.messageExpression), `spec.validations[${i}].messageExpression`, ['string'])) } : {}),
    };
    return out;
  });
  const auditAnnotations = list(spec.auditAnnotations).map((a, i) => ({
    key: str(a.key),
    expr: track(compileOne(str(a.valueExpression), `spec.auditAnnotations[${i}].valueExpression`, ['string', 'null'])),
  }));
  const pk = isObj(spec.paramKind) ? spec.paramKind : undefined;
  return {
    name: str(meta.name),
    generation: typeof meta.generation === 'number' ? meta.generation : 0,
    uid: str(meta.uid),
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    ...(pk ? { paramKind: { apiVersion: str(pk.apiVersion), kind: str(pk.kind) } } : {}),
    matchConstraints: isObj(spec.matchConstraints) ? spec.matchConstraints : undefined,
    matchConditions,
    variables,
    validations,
    auditAnnotations,
    errors,
  };
}

export type PatchType = 'ApplyConfiguration' | 'JSONPatch';

export interface CompiledMutation {
  readonly patchType: PatchType;
  readonly expression: Compiled;
}

export interface CompiledMutatingPolicy extends CompiledPolicy {
  readonly mutations: readonly CompiledMutation[];
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
}

/**
 * Compiles a MutatingAdmissionPolicy: what it shares with the validating policy (compilePolicy:
 * matchConditions, variables, paramKind, failurePolicy), then each mutation's expression in the
 * mutation environment; an ApplyConfiguration must give a map (an `Object{…}`), a JSONPatch a list.
 */
export function compileMutatingPolicy(policy: Obj): CompiledMutatingPolicy {
  const base = compilePolicy(policy);
  const spec = isObj(policy.spec) ? policy.spec : {};
  const errors = [...base.errors];
  const mutations = list(spec.mutations).map((m, i): CompiledMutation => {
    const patchType: PatchType = m.patchType === 'JSONPatch' ? 'JSONPatch' : 'ApplyConfiguration';
    const field = patchType === 'JSONPatch' ? 'jsonPatch' : 'applyConfiguration';
    const holder = isObj(m[field]) ? m[field] : {};
    const path = `spec.mutations[${i}].${field}.expression`;
    let c = compileOne(str(holder.expression), path, undefined, mutationEnvironment());
    const type = c.program?.type ?? 'dyn';
    const ok = type === 'dyn' || (patchType === 'JSONPatch' ? type.startsWith('list') : type.startsWith('map'));
    if (c.program && !ok) {
      const want = patchType === 'JSONPatch' ? 'list(JSONPatch)' : 'Object';
      c = { source: c.source, path, async: c.async, error: `${path}: Invalid value: ${JSON.stringify(c.source)}: compilation failed: must evaluate to ${want}, not ${type}` };
    }
    if (c.error) errors.push(c.error);
    return { patchType, expression: c };
  });
  return { ...base, errors, mutations, reinvocationPolicy: spec.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never' };
}

/** An evaluation's activation: the request's variables plus the lazily computed `variables`. */
export interface Activation {
  object: unknown;
  oldObject: unknown;
  request: Obj;
  params: unknown;
  namespaceObject: unknown;
  authorizer: unknown;
  variables: Obj;
}

export class EvaluationError extends Error {
  override name = 'EvaluationError';
}

/**
 * Runs one compiled expression; a compile error or runtime failure is an EvaluationError. With a
 * budget, a synchronous expression is metered: at most PER_CALL_LIMIT, and what it used comes off
 * the budget (expressions asking the authorizer are not metered: the meter follows synchronous
 * code only; their checks are bounded by the authorizer library instead).
 */
export async function evaluate(c: Compiled, activation: Activation, budget?: CostBudget): Promise<unknown> {
  if (!c.async) return evaluateNow(c, activation, budget);
  if (!c.program) throw new EvaluationError(`compilation error: ${c.error ?? 'not compiled'}`);
  if (budget && budget.remaining <= 0) throw new EvaluationError(OUT_OF_BUDGET);
  try {
    return await c.program.runAsync(activation as unknown as Record<string, unknown>);
  } catch (e) {
    throw evaluationError(c, e);
  }
}

/**
 * evaluate for an expression that does not use `authorizer` (`c.async` false), synchronously:
 * what the per-request loops call, without a promise per expression.
 */
export function evaluateNow(c: Compiled, activation: Activation, budget?: CostBudget): unknown {
  if (!c.program) throw new EvaluationError(`compilation error: ${c.error ?? 'not compiled'}`);
  if (c.async) throw new Error(`${c.path}: evaluateNow of an expression that uses authorizer`);
  if (budget && budget.remaining <= 0) throw new EvaluationError(OUT_OF_BUDGET);
  const vars = activation as unknown as Record<string, unknown>;
  // Whether the budget, not the per-call limit, bounds this run.
  let budgetBound = false;
  try {
    if (!budget) return c.program.run(vars);
    budgetBound = budget.remaining < PER_CALL_LIMIT;
    const meter = newCostMeter(Math.min(PER_CALL_LIMIT, budget.remaining));
    try {
      return c.program.run(vars, { meter });
    } finally {
      budget.remaining -= Math.min(meter.used, meter.limit);
      if (meter.used > meter.limit && budgetBound) budget.remaining = 0;
    }
  } catch (e) {
    if (e instanceof CelCostLimitError && budgetBound) throw new EvaluationError(OUT_OF_BUDGET);
    throw evaluationError(c, e);
  }
}

function evaluationError(c: Compiled, e: unknown): EvaluationError {
  // CelRuntimeError messages start with the field path; upstream's name the expression.
  const msg = e instanceof Error ? e.message : String(e);
  const bare = msg.startsWith(`${c.path}: `) ? msg.slice(c.path.length + 2) : msg;
  return new EvaluationError(`expression '${c.source}' resulted in error: ${bare.replace(/^evaluation failed: /, '')}`);
}

/**
 * A policy's matchConditions on one activation: 'skip' when one is false (errors then do not
 * count), the first error's message when none is false but one failed, undefined when all hold.
 */
export async function matchConditionsOutcome(policy: Pick<CompiledPolicy, 'matchConditions'>, activation: Activation, budget: CostBudget): Promise<'skip' | { error: string } | undefined> {
  let error: string | undefined;
  for (const m of policy.matchConditions) {
    try {
      if ((m.expr.async ? await evaluate(m.expr, activation, budget) : evaluateNow(m.expr, activation, budget)) === false) return 'skip';
    } catch (e) {
      error ??= `failed to evaluate matchCondition '${m.name}': ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  return error === undefined ? undefined : { error };
}

const NO_VARIABLES: Obj = Object.freeze({});

/**
 * The `variables` object for one evaluation: each variable is computed on first use and kept
 * (upstream's lazy composition). Variables using `authorizer` are computed up front (their
 * checks are asynchronous); an error is kept too and raised wherever the variable is read.
 * Synchronous (no promise, no turn of the microtask queue) when no variable uses `authorizer`,
 * as most policies' do not: this runs for every request a policy applies to.
 */
export function bindVariables(policy: CompiledPolicy, activation: Omit<Activation, 'variables'>): Obj | Promise<Obj> {
  // Most policies declare none: `variables` then has no members, as the proxy below would say.
  if (policy.variables.length === 0) return NO_VARIABLES;
  const values = new Map<string, { value?: unknown; error?: Error }>();
  const byName = new Map(policy.variables.map((v) => [v.name, v.expr]));
  const full = activation as Activation;
  const computeSync = (name: string): { value?: unknown; error?: Error } => {
    const known = values.get(name);
    if (known) return known;
    const c = byName.get(name)!;
    let out: { value?: unknown; error?: Error };
    try {
      if (!c.program) throw new EvaluationError(`compilation error: ${c.error ?? 'not compiled'}`);
      out = { value: c.program.run(full as unknown as Record<string, unknown>) };
    } catch (e) {
      out = { error: new EvaluationError(`composited variable "${name}" fails to evaluate: ${e instanceof Error ? e.message : String(e)}`) };
    }
    values.set(name, out);
    return out;
  };
  const variables = new Proxy({} as Obj, {
    get(_t, key) {
      if (typeof key !== 'string' || !byName.has(key)) return undefined;
      const r = computeSync(key);
      if (r.error) throw r.error;
      return r.value;
    },
    has: (_t, key) => typeof key === 'string' && byName.has(key),
    ownKeys: () => [...byName.keys()],
    getOwnPropertyDescriptor: (_t, key) => (typeof key === 'string' && byName.has(key) ? { enumerable: true, configurable: true, writable: false, value: undefined } : undefined),
  });
  full.variables = variables;
  if (!policy.variables.some((v) => v.expr.async)) return variables;
  return (async () => {
    // In order, so a later asynchronous variable sees the earlier ones.
    for (const v of policy.variables) {
      if (!v.expr.async) continue;
      try {
        values.set(v.name, { value: await evaluate(v.expr, full) });
      } catch (e) {
        values.set(v.name, { error: new EvaluationError(`composited variable "${v.name}" fails to evaluate: ${e instanceof Error ? e.message : String(e)}`) });
      }
    }
    return variables;
  })();
}

/** A CEL result as JSON: CEL ints and uints (bigint) back to numbers; maps and lists converted deeply. */
export function fromCel(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(fromCel);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), fromCel(v)]));
  if (isObj(value)) {
    const out: Obj = {};
    for (const [k, v] of Object.entries(value)) out[k] = fromCel(v);
    return out;
  }
  return value;
}

/**
 * A JSON value as CEL sees it: integral numbers are CEL ints (bigint), as upstream's
 * unstructured conversion makes JSON integers; the rest is unchanged. Only the objects and
 * lists on the way to a number are copied: the rest of the result is `value`'s own (most of an
 * object is strings and maps of strings, and every policy evaluation converts its object). The
 * result must be treated as read-only, and `value` must not change while the result is in use.
 */
export function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const c = toCel(v);
      if (c !== v) (out ??= value.slice())[i] = c;
    }
    return out ?? value;
  }
  const obj = value as Obj;
  let out: Obj | undefined;
  // for…in rather than Object.keys: no array per object, and JSON objects inherit nothing.
  for (const k in obj) {
    const v = obj[k];
    const c = toCel(v);
    if (c === v) continue;
    // A spread copy: the members assigned are ones it has, which V8 keeps fast.
    out ??= { ...obj };
    setMember(out, k, c);
  }
  return out ?? obj;
}
