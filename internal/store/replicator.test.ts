import { describe, expect, it } from 'vitest';
import type { CommittedCommand } from './applier.js';
import { LOCAL_MAX_BATCH, LocalReplicator } from './replicator.js';
import { StoreError, type Command, type TxnResult } from './types.js';

/** A command told apart by its compaction revision, which stands for its position here. */
const command = (n: number): Command => ({ type: 'compact', revision: n });
const numberOf = (c: CommittedCommand): number => (c.command.type === 'compact' ? c.command.revision : -1);

/** An apply function that records each batch and answers one result per command, after a turn of the loop (as a write would). */
function recordingApply() {
  const batches: number[][] = [];
  let revision = 0;
  const apply = async (commands: CommittedCommand[]): Promise<TxnResult[]> => {
    batches.push(commands.map(numberOf));
    await new Promise((r) => setImmediate(r));
    return commands.map(() => ({ succeeded: true, revision: ++revision }));
  };
  return { batches, apply };
}

describe('LocalReplicator', () => {
  it.each([
    { name: 'one command', proposals: 1, maxBatch: 8, batches: [[0]] },
    // The first proposal starts a write alone; those that arrive meanwhile wait for it.
    { name: 'a burst within the limit', proposals: 9, maxBatch: 8, batches: [[0], [1, 2, 3, 4, 5, 6, 7, 8]] },
    { name: 'a burst over the limit', proposals: 20, maxBatch: 8, batches: [[0], [1, 2, 3, 4, 5, 6, 7, 8], [9, 10, 11, 12, 13, 14, 15, 16], [17, 18, 19]] },
    { name: 'a limit of one', proposals: 3, maxBatch: 1, batches: [[0], [1], [2]] },
  ])('group commit: $name', async ({ proposals, maxBatch, batches }) => {
    const r = new LocalReplicator(maxBatch);
    const { batches: seen, apply } = recordingApply();
    r.start(apply);
    const results = await Promise.all(Array.from({ length: proposals }, (_, i) => r.propose(command(i))));
    expect(seen).toEqual(batches);
    // Every proposal gets its own command's result, in log order.
    expect(results.map((x) => x.revision)).toEqual(Array.from({ length: proposals }, (_, i) => i + 1));
  });

  it('takes at most LOCAL_MAX_BATCH commands a batch by default', async () => {
    const r = new LocalReplicator();
    const { batches, apply } = recordingApply();
    r.start(apply);
    const n = LOCAL_MAX_BATCH + 10;
    await Promise.all(Array.from({ length: n }, (_, i) => r.propose(command(i))));
    expect(batches.map((b) => b.length)).toEqual([1, LOCAL_MAX_BATCH, 9]);
  });

  it.each([
    { name: 'a limit below the maximum', limit: 3, sizes: [1, 3, 3, 3] },
    { name: 'a fraction is rounded down', limit: 2.9, sizes: [1, 2, 2, 2, 2, 1] },
    { name: 'below one still takes one', limit: 0.2, sizes: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1] },
    { name: 'above the maximum takes the maximum', limit: 100, sizes: [1, 4, 4, 1] },
    { name: 'not a number takes the maximum', limit: Number.NaN, sizes: [1, 4, 4, 1] },
  ])('limitBatches: $name', async ({ limit, sizes }) => {
    const r = new LocalReplicator(4);
    r.limitBatches(() => limit);
    const { batches, apply } = recordingApply();
    r.start(apply);
    await Promise.all(Array.from({ length: 10 }, (_, i) => r.propose(command(i))));
    expect(batches.map((b) => b.length)).toEqual(sizes);
    expect(batches.flat()).toEqual(Array.from({ length: 10 }, (_, i) => i));
  });

  it('asks the limit again for every batch', async () => {
    const r = new LocalReplicator();
    let limit = 2;
    r.limitBatches(() => limit);
    const { batches, apply } = recordingApply();
    r.start(apply);
    const first = Promise.all(Array.from({ length: 5 }, (_, i) => r.propose(command(i))));
    limit = 10; // read when the second batch is taken, after this turn
    await first;
    expect(batches.map((b) => b.length)).toEqual([1, 4]);
  });

  it('a failed write refuses the batch, everything queued and every later proposal', async () => {
    const r = new LocalReplicator(2);
    let calls = 0;
    r.start(async () => {
      calls++;
      await new Promise((res) => setImmediate(res));
      throw new Error('disk full');
    });
    const outcomes = await Promise.allSettled([0, 1, 2, 3].map((i) => r.propose(command(i))));
    expect(calls).toBe(1);
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      expect((o as PromiseRejectedResult).reason).toBeInstanceOf(StoreError);
    }
    expect(String(r.failure)).toContain('disk full');
    await expect(r.propose(command(4))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });
});
