// raft/node/testing/kv-state-machine.ts owns a minimal replicated key-value map used by the
// driver's tests, the multi-process tests and the benchmark. Commands are JSON:
//   {"op":"put","key":k,"value":v}  → result: the previous value (or null)
// Empty commands (the leader's no-ops) change nothing.

import type { AppliedCommand, StateMachine } from '../raft-node.js';

export interface KvCommand {
  op: 'put';
  key: string;
  value: string;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export function encodeKvCommand(c: KvCommand): Uint8Array {
  return enc.encode(JSON.stringify(c));
}

export class KvStateMachine implements StateMachine {
  readonly data = new Map<string, string>();
  /** Every applied index, to check order in tests. */
  appliedIndexes: number[] = [];
  lastApplied = 0;

  apply(c: AppliedCommand): string | null {
    if (c.index <= this.lastApplied) throw new Error(`apply out of order: ${c.index} after ${this.lastApplied}`);
    this.lastApplied = c.index;
    this.appliedIndexes.push(c.index);
    if (c.data.length === 0) return null;
    const cmd = JSON.parse(dec.decode(c.data)) as KvCommand;
    const prev = this.data.get(cmd.key) ?? null;
    this.data.set(cmd.key, cmd.value);
    return prev;
  }

  snapshot(): Uint8Array {
    return enc.encode(JSON.stringify({ lastApplied: this.lastApplied, data: [...this.data] }));
  }

  restore(image: Uint8Array): void {
    const parsed = JSON.parse(dec.decode(image)) as { lastApplied: number; data: [string, string][] };
    this.data.clear();
    for (const [k, v] of parsed.data) this.data.set(k, v);
    this.lastApplied = parsed.lastApplied;
    this.appliedIndexes = [];
  }

  get(key: string): string | undefined {
    return this.data.get(key);
  }
}
