// internal/cel owns how the server compiles and runs CEL expressions (structured
// authentication's claim rules today; authorization match conditions and admission later): one
// library (@marcbachmann/cel-js), environments with declared variables and the options
// upstream's CEL environments have (optional types on), expressions parsed and type checked
// once at load (an error names the field path), and results checked for the type the field
// wants. Messages never repeat the variables: they can hold tokens' claims, which do not
// belong in logs. kubernetesCelEnvironment adds upstream's Kubernetes libraries (internal/cel/lib)
// for the rules of custom resources and admission policies. Imports: internal/cel/lib.

import { type ASTNode, Environment, serialize } from '@marcbachmann/cel-js';
import { PER_CALL_LIMIT } from './cost-model.js';
import { type Shape, estimateCost } from './cost.js';
import { registerKubernetesLibraries } from './lib/index.js';
import { CostLimitExceeded, CostMeter, meterVariables, unmetered, withMeter } from './meter.js';
import { rewriteObjectConstruction, supportsObjectConstruction } from './object-construction.js';

export { Environment, CostMeter, CostLimitExceeded };
export { JSONPATCH_OPS, registerObjectConstruction } from './object-construction.js';
export * from './cost-model.js';
export { type Shape, DYN, LEAST, SCALAR, estimateCost, listShape, mapShape, stringShape, unboundedCount } from './cost.js';

export class CelCompileError extends Error {
  override name = 'CelCompileError';
}

export class CelRuntimeError extends Error {
  override name = 'CelRuntimeError';
}

/** The evaluation passed its meter's limit; the message is upstream's. */
export class CelCostLimitError extends CelRuntimeError {
  override name = 'CelCostLimitError';
}

export interface RunOptions {
  /**
   * Charges this evaluation's cost (meter.ts: reads of the variables' fields and elements,
   * library calls, one unit per expression node) and stops it with a CelCostLimitError when the
   * meter passes its limit. Without a meter nothing is counted.
   */
  meter?: CostMeter;
}

/** A meter for one evaluation of one expression, with upstream's PerCallLimit by default. */
export function newCostMeter(limit: number = PER_CALL_LIMIT): CostMeter {
  return new CostMeter(limit);
}

export interface CompiledExpression {
  readonly source: string;
  readonly path: string;
  /** The type the checker inferred (`bool`, `string`, `list<string>`, `dyn`…). */
  readonly type: string;
  /** The parsed expression. */
  readonly ast: ASTNode;
  /** The estimated largest cost of one evaluation with variables of these shapes (cost.ts). */
  estimateCost(variables: Readonly<Record<string, Shape>>): number;
  /** Evaluates with the given variables; throws CelRuntimeError (message without the variables). */
  run(variables: Record<string, unknown>, options?: RunOptions): unknown;
  /** The same, for expressions that call asynchronous functions (an authorizer check). */
  runAsync(variables: Record<string, unknown>): Promise<unknown>;
}

/** An environment declaring `variables` (name → CEL type such as `map` or `string`). */
export function celEnvironment(variables: Readonly<Record<string, string>>): Environment {
  let env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false });
  for (const [name, type] of Object.entries(variables)) env = env.registerVariable(name, type);
  return env;
}

/** Reserved for environment choices of later callers (none yet: every library is always on). */
export type KubernetesCelOptions = Record<string, never>;

/**
 * An environment declaring `variables` with upstream's Kubernetes CEL libraries registered: lists,
 * regex, url, quantity, ip, cidr, format, sets and the strings extension (README "CEL"). Shared by
 * CRD validation rules and admission policies.
 */
export function kubernetesCelEnvironment(variables: Readonly<Record<string, string>>, _options?: KubernetesCelOptions): Environment {
  return registerKubernetesLibraries(celEnvironment(variables));
}

/**
 * Parses and type checks `source` in `env`; a syntax or type error is a CelCompileError naming
 * `path`. `want` lists the result types the field accepts (`dyn` always passes: a map value's
 * type is only known when it runs). In an environment with registerObjectConstruction, message
 * construction is rewritten first (object-construction.ts); `source` stays the original.
 */
export function compileExpression(env: Environment, source: string, path: string, want?: readonly string[]): CompiledExpression {
  if (source.trim() === '') throw new CelCompileError(`${path}: Required value: expression must not be empty`);
  const invalid = (why: string) => new CelCompileError(`${path}: Invalid value: ${JSON.stringify(source)}: compilation failed: ${why}`);
  let program: ReturnType<Environment['parse']>;
  try {
    // Message construction (`Object{…}`, `JSONPatch{…}`) where the environment declares it.
    program = env.parse(supportsObjectConstruction(env) ? rewriteObjectConstruction(source) : source);
  } catch (e) {
    throw invalid(firstLine(e));
  }
  const checked = program.check();
  if (!checked.valid) throw invalid(firstLine(checked.error));
  const type = checked.type ?? 'dyn';
  if (want && type !== 'dyn' && !want.includes(type)) throw invalid(`must evaluate to one of ${want.join(', ')}, not ${type}`);
  program = withRE2Matches(env, program, type);
  const nodes = countNodes(program.ast);
  const names = identifiers(program.ast);
  const fail = (e: unknown, meter?: CostMeter) => {
    if (e instanceof CostLimitExceeded || (meter && meter.used > meter.limit)) return new CelCostLimitError(new CostLimitExceeded().message);
    return new CelRuntimeError(`${path}: evaluation failed: ${safeMessage(e)}`);
  };
  return {
    source,
    path,
    type,
    ast: program.ast,
    estimateCost: (variables) => estimateCost(program.ast, variables),
    run(variables, options) {
      let out: unknown;
      const meter = options?.meter;
      try {
        if (meter) {
          meter.charge(nodes);
          const metered = meterVariables(variables, names, meter);
          out = unmetered(withMeter(meter, () => program(metered)));
        } else {
          out = program(variables);
        }
      } catch (e) {
        throw fail(e, meter);
      }
      if (out instanceof Promise) {
        out.catch(() => {});
        throw new CelRuntimeError(`${path}: evaluation failed: the expression needs asynchronous evaluation`);
      }
      return out;
    },
    async runAsync(variables) {
      try {
        return await program(variables);
      } catch (e) {
        throw fail(e);
      }
    },
  };
}

/**
 * The engine's `string.matches` runs JavaScript's backtracking RegExp, which a pattern such as
 * `^(a+)+$` can keep busy for minutes on a short input. Where the environment has our RE2
 * `matches(string, string)` (kubernetesCelEnvironment), `s.matches(p)` is rewritten to it: the
 * expression is serialized with the calls replaced and parsed again. Anything that does not
 * survive the round trip unchanged in type keeps the original program.
 */
function withRE2Matches(env: Environment, program: ReturnType<Environment['parse']>, type: string): ReturnType<Environment['parse']> {
  let found = false;
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== 'object' || !('op' in node) || !('args' in node)) return node;
    const n = node as { op: string; args: unknown };
    if (n.op === 'rcall') {
      const [name, receiver, args] = n.args as [string, unknown, unknown[]];
      if (name === 'matches' && args.length === 1) {
        found = true;
        return { op: 'call', args: ['matches', [rewrite(receiver), rewrite(args[0])]] };
      }
    }
    if (n.op === 'value' || n.op === 'id') return { op: n.op, args: n.args };
    return { op: n.op, args: rewrite(n.args) };
  };
  const rewritten = rewrite(program.ast);
  if (!found) return program;
  try {
    const again = env.parse(serialize(rewritten as ASTNode));
    const checked = again.check();
    return checked.valid && (checked.type ?? 'dyn') === type ? again : program;
  } catch {
    return program;
  }
}

function countNodes(node: unknown): number {
  if (Array.isArray(node)) return node.reduce((n: number, x) => n + countNodes(x), 0);
  if (node && typeof node === 'object' && 'op' in node && 'args' in node) return 1 + countNodes((node as { args: unknown }).args);
  return 0;
}

/**
 * Every identifier the expression names (its variables, and its comprehensions' own, which no
 * activation has): the variables a metered run wraps.
 */
function identifiers(root: unknown): string[] {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const x of node) visit(x);
      return;
    }
    if (!node || typeof node !== 'object' || !('op' in node) || !('args' in node)) return;
    const n = node as { op: unknown; args: unknown };
    if (n.op === 'id' && typeof n.args === 'string') found.add(n.args);
    else visit(n.args);
  };
  visit(root);
  return [...found];
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
}

/** The first line of the library's message, bounded (it never needs to echo the variables). */
function safeMessage(e: unknown): string {
  const m = firstLine(e);
  return m.length > 200 ? `${m.slice(0, 200)}…` : m;
}

export function expectBoolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw new CelRuntimeError(`${path}: expression must return a boolean, got ${typeName(value)}`);
  return value;
}

export function expectString(value: unknown, path: string): string {
  if (typeof value !== 'string') throw new CelRuntimeError(`${path}: expression must return a string, got ${typeName(value)}`);
  return value;
}

/** A string or a list of strings, as groups and extra values may be. */
export function expectStrings(value: unknown, path: string): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  throw new CelRuntimeError(`${path}: expression must return a string or a list of strings, got ${typeName(value)}`);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'object') return 'map';
  if (typeof v === 'number') return 'double';
  return typeof v;
}
