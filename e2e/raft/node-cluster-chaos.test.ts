// Three real replica processes (RaftNode + LevelDB with fsync + HTTP/2 mutual TLS) on
// 127.0.0.1/.2/.3, under a concurrent client load, while the leader is killed with SIGKILL
// again and again (and restarted from its data directory) and a follower is cut off the
// network for a while. Afterwards: no acknowledged write may be lost, and the whole recorded
// history (puts and ReadIndex gets, with unknown outcomes as such) must be linearizable.
// Replicas run the compiled dist/ tree (run `make build` first). The run logs its progress;
// its time bound grows with the work asked for (RAFT_CHAOS_KILLS) and is generous, because a
// loaded machine is slow rather than wrong; a run that stops making progress (no phase
// finished, no client operation completed) fails early with the phases it got through.

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
/** No phase finished and no client operation completed for this long: the run is stuck. */
const STALL_MS = Number(process.env.RAFT_CHAOS_STALL_MS ?? 60_000);
/**
 * The whole run: about 20 s of scripted load and faults plus starts, elections and the check
 * take under a minute on an idle machine; allow several times that, per round of faults.
 */
const TIMEOUT_MS = Number(process.env.RAFT_CHAOS_TIMEOUT_MS ?? 180_000 + LEADER_KILLS * 60_000);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Phase log with elapsed times, and a watchdog that rejects when nothing progresses. */
class Progress {
  readonly lines: string[] = [];
  private last = performance.now();
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly t0: number) {}

  /** A phase finished: logged, and it counts as progress. */
  phase(what: string): void {
    this.last = performance.now();
    const line = `[chaos +${((this.last - this.t0) / 1000).toFixed(1)}s] ${what}`;
    this.lines.push(line);
    console.log(line);
  }

  /** A client operation completed. */
  beat(): void {
    this.last = performance.now();
  }

  /** Rejects once nothing progressed for STALL_MS; stop() ends the watch. */
  watch(): Promise<never> {
    return new Promise((_, reject) => {
      this.timer = setInterval(() => {
        if (performance.now() - this.last < STALL_MS) return;
        this.stop();
        reject(new Error(`no progress for ${STALL_MS} ms; phases so far:\n${this.lines.join('\n')}`));
      }, 1000);
    });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

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
    const t0 = performance.now();
    const progress = new Progress(t0);
    const cluster = await ProcessCluster.create({ size: 3, dir, tickMs: 50, electionTicks: 10, snapshotEntries: 300, log: (l) => logs.push(l) });
    const history: KvOperation[] = [];
    const now = (): number => performance.now() - t0;
    let seed = 4242;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      // High bits: an LCG's low bits cycle with short periods.
      return Math.floor((seed / 2147483648) * n);
    };
    const events: string[] = [];
    const event = (what: string): void => {
      events.push(`${now().toFixed(0)}ms ${what}`);
      progress.phase(what);
    };
    let running = true;
    let counts: NodeJS.Timeout | null = null;
    const countOps = (): string => {
      const acked = history.filter((o) => o.input.op === 'put' && !o.output.unknown).length;
      const unknown = history.filter((o) => o.output.unknown).length;
      return `acked puts ${acked}, unknown puts ${unknown}, reads ${history.length - acked - unknown}`;
    };

    const scenario = async (): Promise<Map<string, string | null>> => {
      await cluster.startAll();
      progress.phase('3 replicas serving');
      await cluster.waitForLeader();
      progress.phase('leader elected');

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
            if (out.kind === 'ok') progress.beat();
          } else {
            const out = await kvGet(url, key, 4000);
            if (out.kind === 'ok') history.push({ clientId, input: { op: 'get', key }, call, output: { value: out.value }, return: now() });
            if (out.kind === 'ok') progress.beat();
          }
          await sleep(2);
        }
      };
      const clients = Array.from({ length: CLIENTS }, (_, i) => client(i + 1));
      counts = setInterval(() => console.log(`[chaos +${(now() / 1000).toFixed(1)}s] ${countOps()}`), 5000);

      for (let round = 0; round < LEADER_KILLS; round++) {
        await sleep(2500);
        if (round === 1) {
          const leader = await cluster.waitForLeader();
          const follower = cluster.ids.find((id) => id !== leader)!;
          event(`partition ${follower}`);
          await setPartitioned(cluster.apiUrl(follower), true);
          await sleep(2500);
          await setPartitioned(cluster.apiUrl(follower), false);
          event(`heal ${follower}`);
        }
        const leader = await cluster.waitForLeader();
        event(`kill -9 leader ${leader} (round ${round + 1} of ${LEADER_KILLS})`);
        await cluster.kill(leader);
        await sleep(700);
        await cluster.start(leader);
        event(`restarted ${leader}`);
      }
      await sleep(1500);
      running = false;
      await Promise.all(clients);
      clearInterval(counts);
      progress.phase(`clients stopped: ${countOps()}`);

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
      progress.phase('final reads done');
      return finalValues;
    };

    try {
      const run = scenario();
      // After a stall the scenario fails too, once the cluster is stopped below: already reported.
      run.catch(() => undefined);
      const finalValues = await Promise.race([run, progress.watch()]);
      progress.stop();

      const acked = history.filter((o) => o.input.op === 'put' && !o.output.unknown).length;
      const summary = `${countOps()}; ${events.join('; ')}`;
      console.log(summary);
      expect(acked, summary).toBeGreaterThan(100);
      expect(findLostWrites(history, finalValues), summary).toEqual([]);
      const verdict = checkOperations(kvModel, history, { maxSteps: 20_000_000 });
      progress.phase(`linearizability check: ${verdict.result}`);
      if (verdict.result === 'illegal') {
        const lines = (verdict.failedPartition ?? []).map((o) => kvModel.describe!(o));
        throw new Error(`history not linearizable (${summary}):\n${lines.slice(0, 200).join('\n')}`);
      }
      expect(verdict.result, summary).toBe('ok');
      expect(logs.filter((l) => l.includes('fatal'))).toEqual([]);
    } finally {
      running = false;
      progress.stop();
      if (counts) clearInterval(counts);
      closeClientConnections();
      await cluster.stopAll();
      await rm(dir, { recursive: true, force: true });
    }
  }, TIMEOUT_MS);
});
