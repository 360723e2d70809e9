// internal/cel/meter owns the runtime cost of one evaluation. The engine has no cost hooks, so
// the wrapper counts what it can see: every read of a field, map entry or list element of the
// variables' values (the values are wrapped in read-counting proxies: a comprehension over a
// list pays one unit per element it visits, nested ones multiply), plus the call cost of every
// Kubernetes library function and of the wrapped standard string and regex functions (computed
// from the actual sizes, as cost-model.ts says), plus one unit per node of the expression. When
// the meter passes its limit the read or call throws CostLimitExceeded and the evaluation stops.
// Imports: cost-model only.

import { callCost } from './cost-model.js';

export class CostLimitExceeded extends Error {
  override name = 'CostLimitExceeded';
  constructor() {
    // Upstream's wording, which its callers match on.
    super('operation cancelled: actual cost limit exceeded');
  }
}

export class CostMeter {
  used = 0;
  constructor(readonly limit: number) {}

  charge(units: number): void {
    this.used += units;
    if (this.used > this.limit) throw new CostLimitExceeded();
  }
}

let active: CostMeter | undefined;

/** Runs `fn` with `meter` receiving the library functions' call costs (synchronous code only). */
export function withMeter<T>(meter: CostMeter, fn: () => T): T {
  const previous = active;
  active = meter;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

/** Charges a library call of `name` with its receiver and arguments to the active meter. */
export function chargeCall(name: string, args: readonly unknown[]): void {
  if (active) active.charge(callCost(name, args.map(sizeOfValue)));
}

/** Wraps a library handler so that each call is charged before it runs. */
export function metered<A extends unknown[], R>(name: string, fn: (...args: A) => R): (...args: A) => R {
  return (...args: A) => {
    chargeCall(name, args);
    return fn(...args);
  };
}

export function sizeOfValue(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.length;
  if (v instanceof Map) return v.size;
  if (v instanceof Uint8Array) return v.length;
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.keys(v).length;
  return 1;
}

const TARGET = Symbol('cel.meter.target');

/**
 * The variables named in `names` (those an expression refers to), with every object and array
 * inside them wrapped so that reading a field or element charges one unit to `meter`: one map of
 * proxies for them all, and the variables an expression does not name left out rather than
 * wrapped (an admission activation has seven). Plain JSON-like values only (objects, arrays,
 * scalars); other objects (a Date, a library type) are passed as they are.
 */
export function meterVariables(variables: Record<string, unknown>, names: readonly string[], meter: CostMeter): Record<string, unknown> {
  const seen = new WeakMap<object, object>();
  // One handler for every proxy of the run.
  const handler: ProxyHandler<object> = {
    get(target, key, receiver) {
      if (key === TARGET) return target;
      const out: unknown = Reflect.get(target, key, receiver);
      if (typeof key === 'string' && key !== 'length' && key !== 'constructor') {
        meter.charge(1);
        return wrap(out);
      }
      return out;
    },
  };
  const wrap = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (!Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype) return value;
    const known = seen.get(value);
    if (known) return known;
    const proxy = new Proxy(value, handler);
    seen.set(value, proxy);
    return proxy;
  };
  const out: Record<string, unknown> = {};
  for (const name of names) if (Object.prototype.hasOwnProperty.call(variables, name)) out[name] = wrap(variables[name]);
  return out;
}

/** The plain value behind a metered one (for results handed back to callers). */
export function unmetered<T>(value: T): T {
  if (value && typeof value === 'object') {
    const t = (value as Record<symbol, unknown>)[TARGET];
    if (t !== undefined) return t as T;
  }
  return value;
}
