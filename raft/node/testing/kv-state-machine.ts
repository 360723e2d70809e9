// raft/node/testing/kv-state-machine.ts owns a minimal replicated key-value map used by the
// driver's tests, the multi-process tests and the benchmark. Commands are JSON:
//   {"op":"put","key":k,"value":v}  → result: the previous value (or null); "op" may be left out
// Empty commands (the leader's no-ops) change nothing. BatchingKvStateMachine is the same map
// applied through StateMachine.applyBatch, recording the batches it was handed.

import type { AppliedCommand, StateMachine } from '../raft-node.js';

export interface KvCommand {
  op: 'put';
  key: string;
  value: string;
}

const enc = new TextEncoder();
/** Pairs encoded per event-loop turn when snapshotting. */
const SNAPSHOT_SLICE = 1024;
const dec = new TextDecoder();

export function encodeKvCommand(c: KvCommand): Uint8Array {
  return enc.encode(JSON.stringify(c));
}

/**
 * Validates a client's JSON body {"key": string, "value": string} and returns it as a put
 * command as it is (commands are that JSON), so that the server neither re-encodes it nor
 * proposes anything apply() could choke on; null when the body is not such an object.
 */
export function kvPutCommandFromJson(body: Uint8Array): Uint8Array | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(dec.decode(body));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const { key, value, op } = parsed as Record<string, unknown>;
  if (typeof key !== 'string' || typeof value !== 'string' || (op !== undefined && op !== 'put')) return null;
  return body;
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

  /**
   * Captures the map at once (a shallow copy of its pairs), then encodes it in slices of
   * SNAPSHOT_SLICE pairs, yielding to the event loop in between (see StateMachine.snapshot):
   * the benchmark's map holds megabytes, and encoding it in one go stalled every request.
   */
  snapshot(): Promise<Uint8Array> {
    const lastApplied = this.lastApplied;
    const pairs = [...this.data];
    return (async () => {
      const parts: Uint8Array[] = [enc.encode(`{"lastApplied":${lastApplied},"data":[`)];
      for (let at = 0; at < pairs.length; at += SNAPSHOT_SLICE) {
        if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        const slice = JSON.stringify(pairs.slice(at, at + SNAPSHOT_SLICE));
        parts.push(enc.encode((at > 0 ? ',' : '') + slice.slice(1, -1)));
      }
      parts.push(enc.encode(']}'));
      const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let offset = 0;
      for (const p of parts) {
        out.set(p, offset);
        offset += p.length;
      }
      return out;
    })();
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

/**
 * The same map, applied in batches (StateMachine.applyBatch): for the driver's tests of the
 * batch hook. apply() stays usable but counts its calls, since RaftNode should not use it here.
 */
export class BatchingKvStateMachine extends KvStateMachine {
  /** The indexes of each applyBatch call, in call order. */
  readonly batches: number[][] = [];
  singleApplies = 0;

  override apply(c: AppliedCommand): string | null {
    this.singleApplies++;
    return super.apply(c);
  }

  applyBatch(commands: AppliedCommand[]): (string | null)[] {
    this.batches.push(commands.map((c) => c.index));
    return commands.map((c) => super.apply(c));
  }
}

