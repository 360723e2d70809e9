// e2e/support/rv-register-model owns the sequential specification the cluster e2e tests check
// API histories against with the project's linearizability checker (raft/linearizability): each
// ConfigMap is a register holding (value, resourceVersion) or nothing, written by create (only
// when absent) and by update with a resourceVersion precondition (compare-and-set by RV), and
// read by consistent GETs. kv-model's registers compare values only; here every write's
// resourceVersion is part of the state, so a read must return the exact version the write was
// acknowledged with (the same resourceVersion on every replica), and an update's outcome
// (applied, 409 Conflict, 404) must follow from the version it names.
//
// Outcome kinds: 'ok' (2xx, with the new or read version), 'notfound', 'exists' (create's 409
// AlreadyExists), 'conflict' (update's 409), 'unknown' (504, a reset or a timeout: the write may
// or may not have been applied; the history's return time is then Infinity). A write known to
// have failed (503/429, connection refused) has no effect and is left out of the history.

import type { Model, Operation } from '../../raft/linearizability/index.js';

export type RegisterInput =
  | { op: 'get'; key: string }
  | { op: 'create'; key: string; value: string }
  | { op: 'update'; key: string; value: string; expectedRv: string };

export type RegisterOutput =
  | { kind: 'ok'; value?: string | null; rv?: string }
  | { kind: 'notfound' }
  | { kind: 'exists' }
  | { kind: 'conflict' }
  /** May or may not have been applied; `rv` is the version it has if it was (when learnt from a reader). */
  | { kind: 'unknown'; rv?: string };

export type RegisterOperation = Operation<RegisterInput, RegisterOutput>;

type State = { value: string; rv: string } | null;

/** A placeholder version for a write whose version nobody ever saw: it matches no precondition. */
const unseen = (value: string): string => `unseen:${value}`;

export const rvRegisterModel: Model<State, RegisterInput, RegisterOutput> = {
  init: () => null,
  step(state, input, output) {
    switch (input.op) {
      case 'get':
        if (output.kind === 'notfound') return state === null ? state : undefined;
        if (output.kind === 'ok') return state !== null && state.value === output.value && state.rv === output.rv ? state : undefined;
        return undefined;
      case 'create':
        switch (output.kind) {
          case 'ok':
            return state === null ? { value: input.value, rv: output.rv ?? unseen(input.value) } : undefined;
          case 'exists':
            return state !== null ? state : undefined;
          case 'unknown':
            return state === null ? { value: input.value, rv: output.rv ?? unseen(input.value) } : state;
          default:
            return undefined;
        }
      case 'update': {
        const matches = state !== null && state.rv === input.expectedRv;
        switch (output.kind) {
          case 'ok':
            return matches ? { value: input.value, rv: output.rv ?? unseen(input.value) } : undefined;
          case 'conflict':
            return state !== null && !matches ? state : undefined;
          case 'notfound':
            return state === null ? state : undefined;
          case 'unknown':
            return matches ? { value: input.value, rv: output.rv ?? unseen(input.value) } : state;
          default:
            return undefined;
        }
      }
    }
  },
  stateKey: (s) => (s === null ? '\u0000' : `${s.value}@${s.rv}`),
  partition(history) {
    const byKey = new Map<string, RegisterOperation[]>();
    for (const op of history) {
      let list = byKey.get(op.input.key);
      if (!list) byKey.set(op.input.key, (list = []));
      list.push(op);
    }
    return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
  },
  describe(op) {
    const i = op.input;
    const o = op.output;
    const args = i.op === 'get' ? '' : i.op === 'create' ? `${i.value}` : `${i.value} if rv=${i.expectedRv}`;
    const out = o.kind === 'ok' ? (i.op === 'get' ? `${String(o.value)}@${String(o.rv)}` : `ok@${String(o.rv)}`) : o.kind;
    return `[${op.call.toFixed(1)},${op.return === Infinity ? '∞' : op.return.toFixed(1)}] c${op.clientId} ${i.key}.${i.op}(${args}) -> ${out}`;
  },
};
