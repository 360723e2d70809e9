// Crash consistency of the log stores (LevelDB, segment files), for real: a child process writes batches as fast
// as it can and is killed with SIGKILL at random moments; after every kill the store must open
// and satisfy its invariants, and nothing the child saw acknowledged may be missing. The child
// runs the compiled dist/ tree (run `make build` first).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { spawnBuiltModule } from '../../raft/launch/spawn-module.js';
import { createLevelLogStore } from '../../raft/storage/level-log-store.js';
import type { DurableLogStore } from '../../raft/storage/log-store.js';
import { createSegmentLogStore } from '../../raft/storage/segment-log-store.js';
import type { DurableLogState } from '../../raft/types.js';

interface Ack {
  commit: number;
  commitTerm: number;
  lastIndex: number;
  term: number;
}

const ITERATIONS = Number(process.env.RAFT_CRASH_ITERATIONS ?? 8);
const dec = new TextDecoder();

function checkInvariants(state: DurableLogState): void {
  const snapIndex = state.snapshot?.metadata.index ?? 0;
  if (state.snapshot) {
    const { index, term } = state.snapshot.metadata;
    expect(dec.decode(state.snapshot.data.subarray(0, 64)).startsWith(`image@${index}@${term}@`)).toBe(true);
  }
  let prevTerm = state.snapshot?.metadata.term ?? 0;
  state.entries.forEach((e, k) => {
    expect(e.index).toBe(snapIndex + 1 + k);
    expect(e.term).toBeGreaterThanOrEqual(prevTerm);
    expect(dec.decode(e.data.subarray(0, 40)).startsWith(`${e.index}@${e.term}`)).toBe(true);
    prevTerm = e.term;
  });
  const lastIndex = state.entries.length > 0 ? state.entries[state.entries.length - 1]!.index : snapIndex;
  expect(state.hardState.commit).toBeLessThanOrEqual(lastIndex);
}

/** The acknowledged commit point must have survived: same term at that index, or covered by the snapshot. */
function checkDurable(state: DurableLogState, ack: Ack): void {
  expect(state.hardState.commit).toBeGreaterThanOrEqual(ack.commit);
  const snapIndex = state.snapshot?.metadata.index ?? 0;
  if (ack.commit > snapIndex) {
    expect(state.entries[ack.commit - snapIndex - 1]?.term).toBe(ack.commitTerm);
  } else if (ack.commit === snapIndex && ack.commit > 0) {
    expect(state.snapshot!.metadata.term).toBe(ack.commitTerm);
  }
}

const STORES: [string, 'level' | 'segments', (dir: string) => DurableLogStore][] = [
  ['LevelDB', 'level', (dir) => createLevelLogStore(dir)],
  ['segment file', 'segments', (dir) => createSegmentLogStore(dir)],
];

describe.each(STORES)('%s log store under kill -9', (_name, kind, open) => {
  it(`recovers a consistent store after ${ITERATIONS} random crashes`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-crash-'));
    let seed = 20240611;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      // High bits: an LCG's low bits cycle with short periods.
      return Math.floor((seed / 2147483648) * n);
    };
    let totalAcks = 0;
    try {
      for (let i = 0; i < ITERATIONS; i++) {
        const child = spawnBuiltModule(import.meta.url, './fixtures/log-store-crash-writer.ts', { args: [dir, String(1 + i), kind], sourceRoots: ['raft', 'e2e/raft'] });
        let lastAck: Ack | null = null;
        let acks = 0;
        let stderr = '';
        child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
        const lines = createInterface({ input: child.stdout! });
        const killAfter = 30 + next(250);
        let killTimer: NodeJS.Timeout | undefined;
        lines.on('line', (line) => {
          lastAck = JSON.parse(line) as Ack;
          acks++;
          // The clock starts at the first acknowledged write so that start-up time does not count.
          if (acks === 1) killTimer = setTimeout(() => child.kill('SIGKILL'), killAfter);
        });
        const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
        clearTimeout(killTimer);
        expect(signal, `writer exited by itself (code ${code}): ${stderr}`).toBe('SIGKILL');
        expect(acks).toBeGreaterThan(0);
        totalAcks += acks;

        const store = open(dir);
        const state = await store.open();
        await store.close();
        checkInvariants(state);
        checkDurable(state, lastAck!);
      }
      expect(totalAcks).toBeGreaterThan(ITERATIONS);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
