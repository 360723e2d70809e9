// raft/linearizability/checker.ts owns the linearizability checker: given a sequential model
// and a concurrent history of completed operations, decide whether some total order of the
// operations (a) respects real time (an operation that returned before another was invoked
// comes first) and (b) is a legal sequential execution of the model.
//
// Algorithm: Wing & Gong's search with Lowe's memoization, as in Porcupine. The history is a
// doubly linked list of call and return events ordered by time. The search walks it, trying
// to linearize the next pending call (lifting its call and return out of the list); reaching
// a return means its operation was not linearized in time, so the last choice is undone. A
// cache of (set of linearized operations, model state) pairs prunes states already explored.
// Linearizability is compositional (Herlihy & Wing), so a model may split a history into
// independent parts (per key) that are checked separately.
//
// API (also for the real-process tests of raft/node):
//   checkOperations(model, history, { maxSteps? }) -> { result: 'ok' | 'illegal' | 'unknown', ... }
//     model:   Model<S, I, O> = { init, step(state, input, output) -> state | undefined,
//              stateKey(state) -> string, partition?(history) -> history[], describe?(op) }
//     history: Operation<I, O>[] with `call` < `return` timestamps from one clock; an
//              operation whose outcome is unknown (a client timeout) has return = Infinity and
//              an output the model accepts in any state where the operation could have run.
//     'unknown' means the search exceeded maxSteps (it never happens for small histories).
//   kvModel (kv-model.ts) is a ready model for put/get/cas on string keys.

export interface Operation<I, O> {
  /** Who issued it; informational (the checker only uses timestamps). */
  clientId: number;
  input: I;
  /** Invocation time. */
  call: number;
  output: O;
  /** Response time; Infinity when the client never learned the outcome. */
  return: number;
}

export interface Model<S, I, O> {
  init(): S;
  /** The state after applying `input` in `state` if `output` is what it returns there; undefined if illegal. */
  step(state: S, input: I, output: O): S | undefined;
  /** A canonical string for a state (equal states, equal keys): the memoization key. */
  stateKey(state: S): string;
  /** Independent sub-histories (for a key-value store: one per key). Default: the whole history. */
  partition?(history: Operation<I, O>[]): Operation<I, O>[][];
  describe?(op: Operation<I, O>): string;
}

export type CheckVerdict = 'ok' | 'illegal' | 'unknown';

export interface CheckResult<I, O> {
  result: CheckVerdict;
  /** For 'illegal': the partition that has no linearization. */
  failedPartition?: Operation<I, O>[];
  /** For 'illegal': the longest prefix of operations the search managed to linearize, in order. */
  longestLinearization?: Operation<I, O>[];
  /** Search steps taken over all partitions. */
  steps: number;
}

interface Node {
  isCall: boolean;
  id: number;
  time: number;
  /** For a call: its return node. */
  match: Node | null;
  prev: Node | null;
  next: Node | null;
}

/** Checks a history; see the module header. */
export function checkOperations<S, I, O>(
  model: Model<S, I, O>,
  history: Operation<I, O>[],
  opts: { maxSteps?: number } = {},
): CheckResult<I, O> {
  const parts = model.partition ? model.partition(history) : [history];
  let steps = 0;
  let verdict: CheckVerdict = 'ok';
  for (const part of parts) {
    const r = checkPartition(model, part, (opts.maxSteps ?? 5_000_000) - steps);
    steps += r.steps;
    if (r.result === 'illegal') {
      return { result: 'illegal', failedPartition: part, longestLinearization: r.longest.map((i) => part[i]), steps };
    }
    if (r.result === 'unknown') verdict = 'unknown';
  }
  return { result: verdict, steps };
}

function buildList<I, O>(ops: Operation<I, O>[]): Node {
  const events: Node[] = [];
  ops.forEach((op, id) => {
    const ret: Node = { isCall: false, id, time: op.return, match: null, prev: null, next: null };
    const call: Node = { isCall: true, id, time: op.call, match: ret, prev: null, next: null };
    events.push(call, ret);
  });
  // By time; at equal times calls first, which treats touching operations as concurrent
  // (the permissive reading when timestamps have limited resolution).
  events.sort((a, b) => a.time - b.time || (a.isCall === b.isCall ? a.id - b.id : a.isCall ? -1 : 1));
  const head: Node = { isCall: false, id: -1, time: -Infinity, match: null, prev: null, next: null };
  let prev = head;
  for (const e of events) {
    prev.next = e;
    e.prev = prev;
    prev = e;
  }
  return head;
}

/** Removes a call and its return from the list (the operation is linearized). */
function lift(call: Node): void {
  (call.prev as Node).next = call.next;
  if (call.next) call.next.prev = call.prev;
  const ret = call.match as Node;
  (ret.prev as Node).next = ret.next;
  if (ret.next) ret.next.prev = ret.prev;
}

/** Puts them back, in reverse order of removal. */
function unlift(call: Node): void {
  const ret = call.match as Node;
  (ret.prev as Node).next = ret;
  if (ret.next) ret.next.prev = ret;
  (call.prev as Node).next = call;
  if (call.next) call.next.prev = call;
}

class Bitset {
  readonly words: Uint32Array;
  constructor(n: number) {
    this.words = new Uint32Array(Math.ceil(n / 32) || 1);
  }
  set(i: number): void {
    this.words[i >>> 5] |= 1 << (i & 31);
  }
  clear(i: number): void {
    this.words[i >>> 5] &= ~(1 << (i & 31));
  }
  key(): string {
    return this.words.join(',');
  }
}

function checkPartition<S, I, O>(
  model: Model<S, I, O>,
  ops: Operation<I, O>[],
  maxSteps: number,
): { result: CheckVerdict; steps: number; longest: number[] } {
  const head = buildList(ops);
  const linearized = new Bitset(ops.length);
  const cache = new Set<string>();
  const stack: { call: Node; state: S }[] = [];
  let state = model.init();
  let entry = head.next;
  let steps = 0;
  let longest: number[] = [];
  while (head.next !== null) {
    if (++steps > maxSteps) return { result: 'unknown', steps, longest };
    const e = entry as Node;
    if (e.isCall) {
      const op = ops[e.id];
      const next = model.step(state, op.input, op.output);
      if (next !== undefined) {
        linearized.set(e.id);
        const key = `${linearized.key()}|${model.stateKey(next)}`;
        if (!cache.has(key)) {
          cache.add(key);
          stack.push({ call: e, state });
          state = next;
          lift(e);
          entry = head.next;
          if (stack.length > longest.length) longest = stack.map((s) => s.call.id);
          continue;
        }
        linearized.clear(e.id);
      }
      entry = e.next;
    } else {
      // A return whose operation is not linearized yet: every order tried so far is wrong.
      const top = stack.pop();
      if (!top) return { result: 'illegal', steps, longest };
      linearized.clear(top.call.id);
      state = top.state;
      unlift(top.call);
      entry = top.call.next;
    }
  }
  return { result: 'ok', steps, longest };
}
