// internal/cel/cost owns the static cost estimate of a parsed expression: a walk over the
// engine's AST with the largest sizes the variables can have (Shapes, built from a schema's
// maxItems, maxProperties and maxLength, or bounded by the largest request when the schema sets
// none), in the outline of upstream's model: a field or variable read costs 1, a call 1 plus its
// cost-model.ts cost at the largest argument sizes, a macro (all, exists, exists_one, map,
// filter) its receiver plus the list's size times the cost of its body, `==`/`+`/`in` on strings
// and lists their traversal. The estimate is an upper bound; callers compare it with upstream's
// limits (cost-model.ts). Imports: cost-model.

import type { ASTNode } from '@marcbachmann/cel-js';
import { MAX_REQUEST_SIZE_BYTES, STRING_TRAVERSAL_FACTOR, callCost } from './cost-model.js';

/** The largest value a variable or field can hold, as far as cost is concerned. */
export interface Shape {
  readonly kind: 'list' | 'map' | 'string' | 'scalar' | 'dyn' | 'least';
  /** Entries of a list or map, characters of a string; 1 for scalars. */
  readonly maxSize: number;
  /** The smallest JSON size of one value of this shape, for bounding unbounded containers. */
  readonly minBytes: number;
  readonly elem?: Shape;
  readonly fields?: Readonly<Record<string, Shape>>;
}

/** How many values of `minBytes` (plus a separator) fit in the largest request. */
export function unboundedCount(minBytes: number): number {
  return Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (Math.max(1, minBytes) + 1));
}

export const SCALAR: Shape = { kind: 'scalar', maxSize: 1, minBytes: 1 };
/** A value nothing is known of: as large as a request allows. */
export const DYN: Shape = { kind: 'dyn', maxSize: unboundedCount(1), minBytes: 1 };
/**
 * A value assumed as small as it can be, and so is everything reached from it (fields, elements,
 * map keys): the estimate with it is a lower bound, the cost an expression has whatever its input.
 * What admission policies are checked with, whose `object` has no schema that bounds it.
 */
export const LEAST: Shape = { kind: 'least', maxSize: 1, minBytes: 1 };

export function stringShape(maxLength?: number): Shape {
  return { kind: 'string', maxSize: maxLength ?? MAX_REQUEST_SIZE_BYTES - 2, minBytes: 2 };
}

export function listShape(elem: Shape, maxItems?: number): Shape {
  return { kind: 'list', maxSize: maxItems ?? unboundedCount(elem.minBytes), minBytes: 2, elem };
}

export function mapShape(fields: Readonly<Record<string, Shape>>, additional?: Shape, maxProperties?: number): Shape {
  const declared = Object.keys(fields).length;
  const maxSize = maxProperties ?? (additional ? unboundedCount(additional.minBytes + 4) : declared);
  return { kind: 'map', maxSize, minBytes: 2, fields, elem: additional };
}

interface Estimate {
  cost: number;
  shape: Shape;
}

const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const traversal = (n: number) => Math.ceil(n * STRING_TRAVERSAL_FACTOR);

/** The estimated largest cost of one evaluation of `ast` with variables of the given shapes. */
export function estimateCost(ast: ASTNode, variables: Readonly<Record<string, Shape>>): number {
  return Math.ceil(walk(ast, new Map(Object.entries(variables))).cost);
}

function child(shape: Shape, name: string): Shape {
  if (shape.kind === 'map') return shape.fields?.[name] ?? shape.elem ?? DYN;
  return shape.kind === 'least' ? LEAST : DYN;
}

function walk(node: ASTNode, scope: ReadonlyMap<string, Shape>): Estimate {
  switch (node.op) {
    case 'value': {
      const v = node.args;
      return { cost: 0, shape: typeof v === 'string' ? stringShape(v.length) : SCALAR };
    }
    case 'id':
      return { cost: 1, shape: scope.get(node.args) ?? DYN };
    case '.':
    case '.?': {
      const [obj, name] = node.args;
      const e = walk(obj, scope);
      return { cost: e.cost + 1, shape: child(e.shape, name) };
    }
    case '[]':
    case '[?]': {
      const [obj, index] = node.args;
      const a = walk(obj, scope);
      const b = walk(index, scope);
      const key = index.op === 'value' && typeof index.args === 'string' ? index.args : undefined;
      const elem = a.shape.kind === 'least' ? LEAST : (a.shape.elem ?? DYN);
      return { cost: a.cost + b.cost + 1, shape: key !== undefined ? child(a.shape, key) : elem };
    }
    case 'list': {
      const items = node.args.map((n) => walk(n, scope));
      return { cost: 1 + sum(items), shape: listShape(items[0]?.shape ?? SCALAR, items.length) };
    }
    case 'map': {
      const entries = node.args.flatMap(([k, v]) => [walk(k, scope), walk(v, scope)]);
      return { cost: 1 + sum(entries), shape: mapShape({}, DYN, node.args.length) };
    }
    case '?:': {
      const [c, t, f] = node.args.map((n) => walk(n, scope)) as [Estimate, Estimate, Estimate];
      const big = t.cost >= f.cost ? t : f;
      return { cost: c.cost + big.cost, shape: big.shape };
    }
    case '&&':
    case '||': {
      const [a, b] = node.args.map((n) => walk(n, scope)) as [Estimate, Estimate];
      return { cost: a.cost + b.cost, shape: SCALAR };
    }
    case '!_':
    case '-_': {
      const a = walk(node.args, scope);
      return { cost: a.cost + 1, shape: a.shape };
    }
    case 'call':
      return call(node.args[0], null, node.args[1], scope);
    case 'rcall':
      return call(node.args[0], node.args[1], node.args[2], scope);
    default: {
      // Binary operators.
      const [l, r] = (node.args as [ASTNode, ASTNode]).map((n) => walk(n, scope)) as [Estimate, Estimate];
      let cost = l.cost + r.cost + 1;
      const aggregate = (s: Shape) => s.kind === 'string' || s.kind === 'list' || s.kind === 'map';
      const sized = (s: Shape) => (aggregate(s) ? s.maxSize : 1);
      const comparison = ['==', '!=', '<', '>', '<=', '>='].includes(node.op);
      if (comparison && aggregate(l.shape) && aggregate(r.shape)) cost += traversal(Math.min(sized(l.shape), sized(r.shape)));
      if (node.op === 'in') cost += r.shape.kind === 'list' ? r.shape.maxSize : 1;
      let shape: Shape = SCALAR;
      if (node.op === '+' && l.shape.kind === 'string') {
        shape = stringShape(l.shape.maxSize + sized(r.shape));
        cost += traversal(shape.maxSize);
      } else if (node.op === '+' && l.shape.kind === 'list') {
        shape = listShape(l.shape.elem ?? DYN, l.shape.maxSize + sized(r.shape));
        cost += shape.maxSize;
      }
      return { cost, shape };
    }
  }
}

function sum(es: readonly Estimate[]): number {
  return es.reduce((n, e) => n + e.cost, 0);
}

function call(name: string, receiver: ASTNode | null, args: readonly ASTNode[], scope: ReadonlyMap<string, Shape>): Estimate {
  if (name === 'has' && !receiver && args.length === 1) return { cost: walk(args[0]!, scope).cost, shape: SCALAR };
  if (receiver && MACROS.has(name) && args.length >= 2 && args[0]!.op === 'id') {
    const r = walk(receiver, scope);
    const n = r.shape.maxSize;
    const elem = r.shape.kind === 'list' ? (r.shape.elem ?? DYN) : r.shape.kind === 'map' ? stringShape() : r.shape.kind === 'least' ? LEAST : DYN;
    const inner = new Map(scope);
    inner.set(args[0]!.args as string, elem);
    const bodies = args.slice(1).map((a) => walk(a, inner));
    const perItem = 1 + sum(bodies);
    const out = name === 'map' ? listShape(bodies[bodies.length - 1]!.shape, n) : name === 'filter' ? listShape(elem, n) : SCALAR;
    return { cost: r.cost + n * perItem, shape: out };
  }
  const parts = [...(receiver ? [walk(receiver, scope)] : []), ...args.map((a) => walk(a, scope))];
  const sizes = parts.map((p) => (p.shape.kind === 'scalar' ? 1 : p.shape.maxSize));
  const qualified = receiver?.op === 'id' && ['sets', 'ip', 'strings', 'format'].includes(receiver.args as string) ? `${receiver.args as string}.${name}` : name;
  const ownSizes = qualified !== name ? sizes.slice(1) : sizes;
  let shape: Shape = SCALAR;
  if (name === 'split' || name === 'findAll') shape = listShape(stringShape(sizes[0]), sizes[0]);
  else if (['lowerAscii', 'upperAscii', 'trim', 'replace', 'substring', 'find', 'charAt', 'format', 'join', 'quote', 'string'].includes(name)) shape = stringShape(Math.max(...sizes, 1));
  else if (['min', 'max', 'sum'].includes(name) && parts[0]?.shape.elem) shape = parts[0].shape.elem;
  return { cost: sum(parts) + callCost(qualified, ownSizes), shape };
}
