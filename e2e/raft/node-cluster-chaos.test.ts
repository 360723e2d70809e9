// Three real replica processes (RaftNode + LevelDB with fsync + HTTP/2 mutual TLS) on
// 127.0.0.1/.2/.3, under a concurrent client load, while the leader is killed with SIGKILL
// again and again (and restarted from its data directory) and a follower is cut off the
// network for a while. Afterwards: no acknowledged write may be lost, and the whole recorded
// history (puts and ReadIndex gets, with unknown outcomes as such) must be linearizable.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkOperations, kvModel, type KvOperation } from '../../raft/linearizability/index.js';
import { closeClientConnections, kvGet, kvPut, setPartitioned } from '../../raft/node/testing/kv-client.js';
import { ProcessCluster } from '../../raft/node/testing/process-cluster.js';

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f'];
const CLIENTS = 6;
const LEADER_KILLS = Number(process.env.RAFT_CHAOS_KILLS ?? 4);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** An acknowledged put is lost if the final value is not its own yet no put that could follow it explains that. */
function findLostWrites(history: KvOperation[], finalValues: Map<string, string | null>): string[] {
  const lost: string[] = [];
  for (const key of KEYS) {
    const puts = history.filter((o) => o.input.op === 'put' && o.input.key === key);
    const acked = puts.filter((o) => !o.output.unknown);
    const final = finalValues.get(key) ?? null;
    const writer = puts.find((o) => o.input.op === 'put' && o.input.value === final);
    for (const p of acked) {
      if (p === writer) continue;
      // p survives if some put (acked or unknown) may have come after it: it did not return before p was called.
      const overwritten = puts.some((q) => q !== p && q.return > p.call && (q === writer || q.call > p.call || q.return > p.return));
      if (!overwritten || final === null) lost.push(`${key}: ${kvModel.describe!(p)} then final ${JSON.stringify(final)}`);
    }
  }
  return lost;
}

describe('RaftNode processes under leader kill -9 and a partition', () => {
  it('loses no acknowledged write and stays linearizable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-chaos-'));
    const logs: string[] = [];
    const cluster = await ProcessCluster.create({ size: 3, dir, tickMs: 50, electionTicks: 10, snapshotEntries: 300, log: (l) => logs.push(l) });
    const history: KvOperation[] = [];
    const t0 = performance.now();
    const now = (): number => performance.now() - t0;
    let seed = 4242;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      // High bits: an LCG's low bits cycle with short periods.
      return Math.floor((seed / 2147483648) * n);
    };
    const events: string[] = [];
    try {
      await cluster.startAll();
      await cluster.waitForLeader();
      let running = true;

      const client = async (clientId: number): Promise<void> => {
        let n = 0;
        while (running) {
          const live = cluster.ids.filter((id) => cluster.isRunning(id));
          const target = live[rand(live.length)];
          if (target === undefined) {
            await sleep(10);
            continue;
          }
          const url = cluster.apiUrl(target);
          const key = KEYS[rand(KEYS.length)]!;
          const call = now();
          if (rand(2) === 0) {
            const value = `c${clientId}-${n++}`;
            const out = await kvPut(url, key, value, 4000);
            if (out.kind === 'ok') history.push({ clientId, input: { op: 'put', key, value }, call, output: {}, return: now() });
            else if (out.kind === 'unknown') history.push({ clientId, input: { op: 'put', key, value }, call, output: { unknown: true }, return: Infinity });
          } else {
            const out = await kvGet(url, key, 4000);
            if (out.kind === 'ok') history.push({ clientId, input: { op: 'get', key }, call, output: { value: out.value }, return: now() });
          }
          await sleep(2);
        }
      };
      const clients = Array.from({ length: CLIENTS }, (_, i) => client(i + 1));

      for (let round = 0; round < LEADER_KILLS; round++) {
        await sleep(2500);
        if (round === 1) {
          const leader = await cluster.waitForLeader();
          const follower = cluster.ids.find((id) => id !== leader)!;
          events.push(`${now().toFixed(0)}ms partition ${follower}`);
          await setPartitioned(cluster.apiUrl(follower), true);
          await sleep(2500);
          await setPartitioned(cluster.apiUrl(follower), false);
          events.push(`${now().toFixed(0)}ms heal ${follower}`);
        }
        const leader = await cluster.waitForLeader();
        events.push(`${now().toFixed(0)}ms kill -9 leader ${leader}`);
        await cluster.kill(leader);
        await sleep(700);
        await cluster.start(leader);
        events.push(`${now().toFixed(0)}ms restarted ${leader}`);
      }
      await sleep(1500);
      running = false;
      await Promise.all(clients);

      // Final linearizable reads through the leader, recorded as operations too.
      const leader = await cluster.waitForLeader();
      const finalValues = new Map<string, string | null>();
      for (const key of KEYS) {
        for (let attempt = 0; ; attempt++) {
          const call = now();
          const out = await kvGet(cluster.apiUrl(leader), key, 4000);
          if (out.kind === 'ok') {
            finalValues.set(key, out.value);
            history.push({ clientId: 0, input: { op: 'get', key }, call, output: { value: out.value }, return: now() });
            break;
          }
          if (attempt > 50) throw new Error(`final read of ${key} kept failing: ${out.why}`);
          await sleep(50);
        }
      }

      const acked = history.filter((o) => o.input.op === 'put' && !o.output.unknown).length;
      const unknown = history.filter((o) => o.output.unknown).length;
      const reads = history.filter((o) => o.input.op === 'get').length;
      const summary = `acked puts ${acked}, unknown puts ${unknown}, reads ${reads}; ${events.join('; ')}`;
      console.log(summary);
      expect(acked, summary).toBeGreaterThan(100);
      expect(findLostWrites(history, finalValues), summary).toEqual([]);
      const verdict = checkOperations(kvModel, history, { maxSteps: 20_000_000 });
      if (verdict.result === 'illegal') {
        const lines = (verdict.failedPartition ?? []).map((o) => kvModel.describe!(o));
        throw new Error(`history not linearizable (${summary}):\n${lines.slice(0, 200).join('\n')}`);
      }
      expect(verdict.result, summary).toBe('ok');
      expect(logs.filter((l) => l.includes('fatal'))).toEqual([]);
    } finally {
      closeClientConnections();
      await cluster.stopAll();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
