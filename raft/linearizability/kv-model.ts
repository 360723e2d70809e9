// raft/linearizability/kv-model.ts owns the sequential specification of a key-value register
// store, for the checker: put(k, v), get(k) -> v | null, cas(k, expected, v) -> swapped.
// Keys are independent, so histories are partitioned per key (each key is a register).

import type { Model, Operation } from './checker.js';

export type KvInput =
  | { op: 'put'; key: string; value: string }
  | { op: 'get'; key: string }
  | { op: 'cas'; key: string; expected: string | null; value: string };

/** `unknown`: the client timed out; the operation may or may not have taken effect. */
export type KvOutput = { unknown: true } | { unknown?: false; value?: string | null; swapped?: boolean };

export type KvOperation = Operation<KvInput, KvOutput>;

/** The value of one key: null when absent. */
type Register = string | null;

export const kvModel: Model<Register, KvInput, KvOutput> = {
  init: () => null,
  step(state, input, output) {
    switch (input.op) {
      case 'put':
        return input.value;
      case 'get':
        if (output.unknown) return state;
        return output.value === state ? state : undefined;
      case 'cas': {
        const matches = state === input.expected;
        // An unknown outcome is whatever the state dictates at the chosen linearization point.
        if (output.unknown) return matches ? input.value : state;
        if (output.swapped !== matches) return undefined;
        return matches ? input.value : state;
      }
    }
  },
  stateKey: (s) => (s === null ? '\u0000' : `=${s}`),
  partition(history) {
    const byKey = new Map<string, KvOperation[]>();
    for (const op of history) {
      const k = op.input.key;
      let list = byKey.get(k);
      if (!list) byKey.set(k, (list = []));
      list.push(op);
    }
    return [...byKey.keys()].sort().map((k) => byKey.get(k) as KvOperation[]);
  },
  describe(op) {
    const i = op.input;
    const o = op.output;
    const out = o.unknown ? '?' : i.op === 'get' ? JSON.stringify(o.value) : i.op === 'cas' ? String(o.swapped) : 'ok';
    const args = i.op === 'put' ? `${i.key}=${i.value}` : i.op === 'get' ? i.key : `${i.key}:${JSON.stringify(i.expected)}->${i.value}`;
    return `[${op.call},${op.return}] c${op.clientId} ${i.op}(${args}) -> ${out}`;
  },
};
